//! Templates a new workspace starts from: definition files in the repository's `templates/`
//! (and the demo CRM in `fixtures/demo/`), embedded in the binary so a fresh install needs no
//! files. Each is deployed through the one deploy path ([`demo::init`]), its sample records
//! loaded through the one save path, or left out.

use crate::error::{Code, Error, Result};
use crate::metadata::definition::WorkspaceDefinition;
use crate::records::demo::{self, InitReport};
use crate::records::workspace::Workspace;
use serde::Serialize;
use ts_rs::TS;

/// A template: its key (`init --template KEY`), what it is for, and its files.
pub struct Template {
    pub key: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    definition: &'static str,
    /// The sample records' CSVs, by their path in the definition's `data`.
    data: &'static [(&'static str, &'static str)],
}

/// What the app lists of a template.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct TemplateSummary {
    pub key: String,
    pub label: String,
    pub description: String,
    /// Object labels, plural, in the definition's order.
    pub objects: Vec<String>,
    pub has_records: bool,
}

macro_rules! template_data {
    ($dir:literal: $($object:literal),*) => {
        &[$((concat!("data/", $object, ".csv"), include_str!(concat!("../../../../templates/", $dir, "/data/", $object, ".csv")))),*]
    };
}

/// Every template, in the order the app offers them.
pub const TEMPLATES: &[Template] = &[
    Template {
        key: "blank",
        label: "Blank",
        description: "No objects yet: define your own in Settings → Objects, then import your data.",
        definition: include_str!("../../../../templates/blank/workspace.json"),
        data: &[],
    },
    Template {
        key: "crm",
        label: "Sales CRM (demo)",
        description:
            "Accounts, contacts, opportunities, invoices and notes, with five users of different rights.",
        definition: demo::DEMO_DEFINITION,
        data: demo::DEMO_DATA,
    },
    Template {
        key: "freelance",
        label: "Clients, projects & time",
        description:
            "A freelancer's clients, their projects and the hours spent on them; a read-only bookkeeper.",
        definition: include_str!("../../../../templates/freelance/workspace.json"),
        data: template_data!("freelance": "client", "project", "time_entry"),
    },
    Template {
        key: "inventory",
        label: "Suppliers & stock",
        description: "Suppliers, the products they deliver and every stock movement; a warehouse user.",
        definition: include_str!("../../../../templates/inventory/workspace.json"),
        data: template_data!("inventory": "supplier", "product", "stock_movement"),
    },
];

/// The template called `key`.
pub fn template(key: &str) -> Result<&'static Template> {
    TEMPLATES.iter().find(|t| t.key == key).ok_or_else(|| {
        let keys: Vec<&str> = TEMPLATES.iter().map(|t| t.key).collect();
        Error::new(Code::NotFound, format!("no template `{key}` (there are: {})", keys.join(", ")))
    })
}

impl Template {
    pub fn definition(&self) -> WorkspaceDefinition {
        WorkspaceDefinition::parse(self.definition).expect("an embedded template is a valid definition")
    }

    pub fn summary(&self) -> TemplateSummary {
        let def = self.definition();
        TemplateSummary {
            key: self.key.to_string(),
            label: self.label.to_string(),
            description: self.description.to_string(),
            objects: def.objects.iter().map(|o| o.plural_label.clone()).collect(),
            has_records: !self.data.is_empty(),
        }
    }

    /// Deploy this template into the empty workspace `ws`, with its sample records or without.
    pub fn init(&self, ws: &mut Workspace, records: bool) -> Result<InitReport> {
        let mut def = self.definition();
        if !records {
            def.data = None;
        }
        demo::init(ws, &def, &|path| {
            self.data
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, text)| text.to_string())
                .ok_or_else(|| Error::internal(format!("template file {path} is not embedded")))
        })
    }
}

/// Every template, as the app lists them.
pub fn summaries() -> Vec<TemplateSummary> {
    TEMPLATES.iter().map(Template::summary).collect()
}
