//! Records as a user sees them: queries, one record, saves and deletes through the one save
//! path, history, CSV import and export, and what the user may see (`describe`).

use crate::output::{self, to_json};
use clap::Subcommand;
use countersign_kernel::error::Detail;
use countersign_kernel::records::csvio::export_csv;
use countersign_kernel::records::import::{self, FileFormat, ImportMode, ImportOptions, ImportReport, Table};
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
    /// Import a file into an object: CSV, a spreadsheet (.xlsx, .ods) or vCards (.vcf). All
    /// rows or none, unless --skip-invalid.
    Import {
        object: String,
        file: PathBuf,
        #[arg(long)]
        skip_invalid: bool,
        /// Check every row and report, write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Column → field mapping: a JSON object `{"Column": "field", …}` (`""` leaves a
        /// column out), or `{"mapping": {…}, "values": {"field": {"their word": "value"}}}`.
        /// Without it columns map by field key or label.
        #[arg(long, value_name = "FILE")]
        mapping: Option<PathBuf>,
        /// Print the suggested mapping (by name and content), the detected types and the
        /// picklist values the object does not hold; import nothing.
        #[arg(long, conflicts_with_all = ["mapping", "dry_run", "skip_invalid"])]
        suggest: bool,
        /// With --suggest: the tool the file was exported from (hubspot, salesforce,
        /// google_contacts), whose column names are tried first.
        #[arg(long, value_name = "TOOL", requires = "suggest")]
        from: Option<String>,
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
        RecordCommand::Import { object, file, skip_invalid, dry_run, mapping, suggest, from } => {
            let format = FileFormat::of_name(&file.to_string_lossy())?;
            let bytes = std::fs::read(&file)?;
            if suggest {
                let tool = from.map(|t| {
                    serde_json::from_value(Value::String(t.clone())).map_err(|_| {
                        Error::new(
                            Code::InvalidValue,
                            format!("--from takes hubspot, salesforce or google_contacts, not `{t}`"),
                        )
                    })
                });
                let table = Table::read(format, &bytes)?;
                return to_json(&import::suggest(session, &object, table, tool.transpose()?)?);
            }
            let mut opts = ImportOptions {
                mode: if skip_invalid { ImportMode::SkipInvalid } else { ImportMode::AllOrNothing },
                dry_run,
                ..Default::default()
            };
            if let Some(path) = mapping {
                read_mapping(&std::fs::read_to_string(path)?, &mut opts)?;
            }
            import(session, &object, format, &bytes, &opts)
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

/// A mapping file: a plain column → field object, or one with `mapping` and `values`.
fn read_mapping(text: &str, opts: &mut ImportOptions) -> Result<()> {
    let bad = |e: serde_json::Error| {
        Error::new(Code::InvalidValue, format!("the mapping file is not a mapping: {e}"))
    };
    let doc: Value = serde_json::from_str(text).map_err(bad)?;
    if doc.get("mapping").is_some_and(Value::is_object) {
        opts.mapping = Some(serde_json::from_value(doc["mapping"].clone()).map_err(bad)?);
        if let Some(values) = doc.get("values") {
            opts.value_map = serde_json::from_value(values.clone()).map_err(bad)?;
        }
    } else {
        opts.mapping = Some(serde_json::from_value(doc).map_err(bad)?);
    }
    Ok(())
}

/// Import a file. An all-or-nothing import that refused the file is an error naming each
/// failed row (a dry run reports instead).
fn import(
    session: &Session<'_>,
    object: &str,
    format: FileFormat,
    bytes: &[u8],
    opts: &ImportOptions,
) -> Result<Value> {
    let mut quiet = |_: &import::ImportProgress| {};
    let watch = import::Watch { progress: &mut quiet, cancelled: &|| false };
    let report = import::import_file(session, object, format, bytes, opts, watch)?;
    if report.failed > 0 && !report.committed && !opts.dry_run {
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
