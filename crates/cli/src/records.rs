//! Records as a user sees them: queries, one record, saves and deletes through the one save
//! path, history, CSV import and export, and what the user may see (`describe`).

use crate::output::{self, to_json};
use clap::Subcommand;
use countersign_kernel::error::Detail;
use countersign_kernel::records::csvio::{export_csv, import_csv, ImportMode, ImportOptions, ImportReport};
use countersign_kernel::{Code, Error, QuerySpec, Result, SaveContext, SaveRequest, Session};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum RecordCommand {
    /// Run a query spec (JSON text, or @FILE).
    Query {
        #[arg(long)]
        spec: String,
    },
    /// Show the SQL a query spec becomes for the user.
    Explain {
        #[arg(long)]
        spec: String,
    },
    /// Read one record.
    Get { object: String, id: String },
    /// Create (no --id) or update (--id) a record: --set field=value … (empty value = blank).
    Save {
        object: String,
        #[arg(long)]
        id: Option<String>,
        /// Refuse unless the record is still at this version.
        #[arg(long)]
        version: Option<i64>,
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
    },
    /// Delete a record.
    Delete {
        object: String,
        id: String,
        #[arg(long)]
        version: Option<i64>,
    },
    /// The data history of a record.
    History { object: String, id: String },
    /// Import a CSV file into an object (all rows or none, unless --skip-invalid).
    Import {
        object: String,
        file: PathBuf,
        #[arg(long)]
        skip_invalid: bool,
        /// Check every row and report, write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Export a query spec's result as CSV (to stdout, or --out FILE).
    Export {
        #[arg(long)]
        spec: String,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The objects and fields the user can see.
    Describe { object: Option<String> },
}

pub fn run(session: &Session<'_>, command: RecordCommand) -> Result<Value> {
    match command {
        RecordCommand::Query { spec } => to_json(&session.query(&parse_spec(&spec)?)?),
        RecordCommand::Explain { spec } => Ok(json!({ "sql": session.explain(&parse_spec(&spec)?)? })),
        RecordCommand::Get { object, id } => to_json(&session.get(&object, &id)?),
        RecordCommand::Save { object, id, version, set } => {
            let values = set_values(set)?;
            let req = match id {
                None => SaveRequest::Create { object, values, id: None, owner: None },
                Some(id) => SaveRequest::Update { object, id, changes: values, expected_version: version },
            };
            to_json(&session.save(req, &SaveContext::default())?)
        }
        RecordCommand::Delete { object, id, version } => to_json(&session.delete(&object, &id, version)?),
        RecordCommand::History { object, id } => {
            Ok(json!({ "entries": to_json(&session.history_of(&object, &id)?)? }))
        }
        RecordCommand::Import { object, file, skip_invalid, dry_run } => {
            import(session, &object, &file, skip_invalid, dry_run)
        }
        RecordCommand::Export { spec, out } => export(session, &parse_spec(&spec)?, out.as_deref()),
        RecordCommand::Describe { object } => describe(session, object.as_deref()),
    }
}

/// A query spec given as JSON text, or as `@FILE`.
pub fn parse_spec(text: &str) -> Result<QuerySpec> {
    match text.strip_prefix('@') {
        Some(path) => QuerySpec::parse(&std::fs::read_to_string(path)?),
        None => QuerySpec::parse(text),
    }
}

/// `--set FIELD=VALUE` pairs as text values (the save path coerces them by field type).
pub fn set_values(set: Vec<String>) -> Result<Map<String, Value>> {
    let mut values = Map::new();
    for kv in set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| Error::new(Code::InvalidValue, format!("--set takes FIELD=VALUE, got `{kv}`")))?;
        values.insert(k.trim().to_string(), Value::String(v.to_string()));
    }
    Ok(values)
}

/// Import a CSV file. An all-or-nothing import that refused the file is an error naming each
/// failed row (a dry run reports instead).
fn import(
    session: &Session<'_>,
    object: &str,
    file: &Path,
    skip_invalid: bool,
    dry_run: bool,
) -> Result<Value> {
    let f = std::fs::File::open(file)?;
    let opts = ImportOptions {
        mode: if skip_invalid { ImportMode::SkipInvalid } else { ImportMode::AllOrNothing },
        dry_run,
        mapping: None,
    };
    let report = import_csv(session, object, std::io::BufReader::new(f), &opts)?;
    if report.failed > 0 && !report.committed && !dry_run {
        return Err(refused_import(&report));
    }
    to_json(&report)
}

fn refused_import(report: &ImportReport) -> Error {
    let mut e = Error::new(
        Code::InvalidCsv,
        format!("{} of {} row(s) failed; nothing was imported", report.failed, report.rows),
    );
    e.details = report
        .errors
        .iter()
        .map(|r| Detail {
            path: format!(
                "line {}{}",
                r.line,
                r.field.as_ref().map(|f| format!(" `{f}`")).unwrap_or_default()
            ),
            message: r.message.clone(),
        })
        .collect();
    e
}

/// Export a query's result as CSV to `out`, or to stdout (then the result is `null`: the CSV
/// is the output).
fn export(session: &Session<'_>, spec: &QuerySpec, out: Option<&Path>) -> Result<Value> {
    match out {
        Some(p) => {
            let n = export_csv(session, spec, std::io::BufWriter::new(std::fs::File::create(p)?))?;
            Ok(json!({ "records": n, "file": p }))
        }
        None => {
            let mut out = output::stdout();
            export_csv(session, spec, &mut out)?;
            out.flush()?;
            Ok(Value::Null)
        }
    }
}

/// What this user may see: one object, or every object they can read (the app's views).
fn describe(session: &Session<'_>, object: Option<&str>) -> Result<Value> {
    let objects = match object {
        Some(o) => vec![session.describe_object(o)?],
        None => session
            .catalog()
            .objects()
            .iter()
            .filter_map(|meta| session.describe_object(meta.key()).ok())
            .collect(),
    };
    Ok(
        json!({ "generation": session.catalog().generation, "user": session.user().key, "objects": to_json(&objects)? }),
    )
}
