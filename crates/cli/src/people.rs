//! Users and permission sets: listed, added and changed, each change a deploy of the current
//! definition by the `--as` user (who needs metadata.deploy), so the kernel checks it like any
//! definition — a change that leaves nobody able to deploy is refused.

use crate::output::to_json;
use crate::workspace::WorkspaceFile;
use clap::Subcommand;
use countersign_kernel::metadata::definition::{FieldLevel, ObjectRight, PermissionSetDef, UserDef};
use countersign_kernel::{Code, Error, Result, WorkspaceDefinition};
use serde_json::{json, Value};

#[derive(Subcommand)]
pub enum UserCommand {
    /// Every user: name, e-mail, active, permission sets.
    List,
    /// Add a user.
    Add {
        key: String,
        #[arg(long)]
        name: String,
        #[arg(long)]
        email: Option<String>,
        /// A permission set to assign (repeat for several).
        #[arg(long = "set", value_name = "SET")]
        sets: Vec<String>,
    },
    /// Change a user: name, e-mail, active, and the permission sets (all of them, replacing).
    Change {
        key: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        email: Option<String>,
        #[arg(long)]
        active: Option<bool>,
        /// The permission sets, comma-separated (replaces the user's list).
        #[arg(long, value_delimiter = ',')]
        sets: Option<Vec<String>>,
    },
    /// An object (and a record) as this user sees it: their rights and fields, the first rows
    /// of the list, the record if they may see it.
    SeeAs {
        #[arg(value_name = "USER")]
        whom: String,
        object: String,
        id: Option<String>,
    },
    /// Your own locale, how dates, numbers and amounts are written for you (en, de-DE, fr-FR,
    /// es-ES): show it, choose one, or `--clear` to follow the workspace's.
    Locale {
        tag: Option<String>,
        #[arg(long, conflicts_with = "tag")]
        clear: bool,
    },
}

#[derive(Subcommand)]
pub enum PermissionSetCommand {
    /// Every permission set.
    List,
    /// Add a permission set (no rights until changed).
    Add {
        key: String,
        #[arg(long)]
        label: String,
    },
    /// Change a permission set.
    Change {
        key: String,
        #[arg(long)]
        label: Option<String>,
        /// System permissions, comma-separated (replaces the list; empty for none).
        #[arg(long, value_delimiter = ',')]
        system: Option<Vec<String>>,
        /// `OBJECT=read,create,edit,delete` (`OBJECT=` for no access); repeat per object.
        #[arg(long = "object", value_name = "OBJECT=RIGHTS")]
        objects: Vec<String>,
        /// `OBJECT.FIELD=none|read|edit` (`OBJECT.FIELD=` to follow the object); repeat.
        #[arg(long = "field", value_name = "OBJECT.FIELD=LEVEL")]
        fields: Vec<String>,
        /// See every record of the objects it can read, whatever their sharing.
        #[arg(long)]
        view_all: Option<bool>,
    },
}

pub fn user(file: WorkspaceFile, acting: Option<String>, command: UserCommand) -> Result<Value> {
    let mut ws = file.open()?;
    let acting = acting.ok_or_else(|| Error::new(Code::UnknownUser, "say who you act as with --as USER"))?;
    match command {
        UserCommand::List => Ok(json!({ "users": to_json(&ws.definition_for(&acting)?.users)? })),
        UserCommand::SeeAs { whom, object, id } => {
            to_json(&ws.session(&acting)?.see_as(&whom, &object, id.as_deref())?)
        }
        UserCommand::Locale { tag, clear } => {
            let s = ws.session(&acting)?;
            if tag.is_some() || clear {
                s.set_own_locale(tag.as_deref())?;
            }
            Ok(json!({ "locale": s.locale().tag(), "own": s.own_locale()? }))
        }
        UserCommand::Add { key, name, email, sets } => {
            let user = UserDef { key, name, email, active: true, permission_sets: sets };
            to_json(&ws.redeploy(&acting, |def| {
                def.users.push(user);
                Ok(())
            })?)
        }
        UserCommand::Change { key, name, email, active, sets } => to_json(&ws.redeploy(&acting, |def| {
            let u = user_mut(def, &key)?;
            if let Some(n) = name {
                u.name = n;
            }
            if let Some(e) = email {
                u.email = Some(e).filter(|e| !e.is_empty());
            }
            if let Some(a) = active {
                u.active = a;
            }
            if let Some(s) = sets {
                u.permission_sets = s.into_iter().filter(|s| !s.is_empty()).collect();
            }
            Ok(())
        })?),
    }
}

pub fn permission_set(
    file: WorkspaceFile,
    acting: Option<String>,
    command: PermissionSetCommand,
) -> Result<Value> {
    let mut ws = file.open()?;
    let acting = acting.ok_or_else(|| Error::new(Code::UnknownUser, "say who you act as with --as USER"))?;
    match command {
        PermissionSetCommand::List => {
            Ok(json!({ "permissionSets": to_json(&ws.definition_for(&acting)?.permission_sets)? }))
        }
        PermissionSetCommand::Add { key, label } => {
            let set = PermissionSetDef {
                key,
                label,
                system: vec![],
                objects: Default::default(),
                fields: Default::default(),
                view_all: false,
            };
            to_json(&ws.redeploy(&acting, |def| {
                def.permission_sets.push(set);
                Ok(())
            })?)
        }
        PermissionSetCommand::Change { key, label, system, objects, fields, view_all } => {
            to_json(&ws.redeploy(&acting, |def| {
                let set = def
                    .permission_sets
                    .iter_mut()
                    .find(|s| s.key == key)
                    .ok_or_else(|| Error::new(Code::NotFound, format!("no permission set `{key}`")))?;
                if let Some(l) = label {
                    set.label = l;
                }
                if let Some(s) = system {
                    set.system = s.into_iter().filter(|s| !s.is_empty()).collect();
                }
                for o in objects {
                    let (object, rights) = pair(&o, "--object OBJECT=read,edit")?;
                    let rights: Vec<ObjectRight> = words(rights).map(parse).collect::<Result<_>>()?;
                    if rights.is_empty() {
                        set.objects.remove(object);
                    } else {
                        set.objects.insert(object.to_string(), rights);
                    }
                }
                for f in fields {
                    let (field, level) = pair(&f, "--field OBJECT.FIELD=none|read|edit")?;
                    if level.is_empty() {
                        set.fields.remove(field);
                    } else {
                        set.fields.insert(field.to_string(), parse::<FieldLevel>(level)?);
                    }
                }
                if let Some(v) = view_all {
                    set.view_all = v;
                }
                Ok(())
            })?)
        }
    }
}

fn user_mut<'d>(
    def: &'d mut WorkspaceDefinition,
    key: &str,
) -> Result<&'d mut countersign_kernel::metadata::definition::UserDef> {
    def.users
        .iter_mut()
        .find(|u| u.key == key)
        .ok_or_else(|| Error::new(Code::UnknownUser, format!("no user `{key}`")))
}

fn pair<'a>(text: &'a str, usage: &str) -> Result<(&'a str, &'a str)> {
    text.split_once('=')
        .ok_or_else(|| Error::new(Code::InvalidValue, format!("`{text}`: write it as {usage}")))
}

fn words(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|w| !w.is_empty())
}

/// A right or a level by its name in the definition file (`read`, `none`, …).
fn parse<T: serde::de::DeserializeOwned>(word: &str) -> Result<T> {
    serde_json::from_value(Value::String(word.to_string())).map_err(|_| {
        Error::new(Code::InvalidValue, format!("`{word}` is not a right or level the definition knows"))
    })
}
