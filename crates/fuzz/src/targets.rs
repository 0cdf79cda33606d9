//! The targets. Each keeps what it needs between cases (a workspace, seeds) and checks its
//! invariants after every case.

use crate::gen::{self, Rng};
use crate::{clip, typed, Outcome, Target};
use countersign_kernel::ai::ask::Ask;
use countersign_kernel::ai::extract::Extract;
use countersign_kernel::ai::pipeline::drive::{self, Step};
use countersign_kernel::ai::pipeline::ModelChoice;
use countersign_kernel::ai::provider::{ChatResponse, Part};
use countersign_kernel::ai::summarize::Summarize;
use countersign_kernel::ingest::{ingest, Document, Limits};
use countersign_kernel::metadata::definition::{FieldLevel, FieldType, WorkspaceDefinition};
use countersign_kernel::metadata::value;
use countersign_kernel::records::csvio::{import_csv, ImportMode, ImportOptions};
use countersign_kernel::records::demo::{demo_definition, DEMO_DATA};
use countersign_kernel::FixedClock;
use countersign_kernel::{Code, DeployOptions, Error, QuerySpec, Session, Workspace, WorkspaceOptions};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

pub const TARGETS: &[&str] = &[
    "documents-text",
    "documents-markdown",
    "documents-html",
    "documents-email",
    "documents-pdf",
    "documents-docx",
    "query-specs",
    "definitions",
    "csv-import",
    "ask",
    "extract",
    "summarize",
];

/// Build a target by name; workspaces go in `dir`.
pub fn make(name: &str, dir: &std::path::Path) -> Result<Box<dyn Target>, Error> {
    Ok(match name {
        n if n.starts_with("documents-") => Box::new(Documents::new(n)?),
        "query-specs" => Box::new(Queries::new(dir)?),
        "definitions" => Box::new(Definitions::new(dir)?),
        "csv-import" => Box::new(CsvImport::new(dir)?),
        "ask" | "extract" | "summarize" => Box::new(Capability::new(name, dir)?),
        other => {
            return Err(Error::new(
                Code::InvalidQuery,
                format!("no fuzz target `{other}`; targets: {}", TARGETS.join(", ")),
            ))
        }
    })
}

const USERS: &[&str] = &["ava", "ben", "cara", "dan", "eve"];

/// Real documents of every format (the demo's), and the hostile ones found so far.
const SEED_DOCUMENTS: &[(&str, &[u8])] = &[
    ("INV-2026-50946.txt", include_bytes!("../../../fixtures/demo/documents/INV-2026-50946.txt")),
    ("INV-2026-50971.md", include_bytes!("../../../fixtures/demo/documents/INV-2026-50971.md")),
    ("INV-2026-51011.html", include_bytes!("../../../fixtures/demo/documents/INV-2026-51011.html")),
    ("INV-2026-51030.eml", include_bytes!("../../../fixtures/demo/documents/INV-2026-51030.eml")),
    ("INV-2026-51047.pdf", include_bytes!("../../../fixtures/demo/documents/INV-2026-51047.pdf")),
    ("INV-2026-51067.docx", include_bytes!("../../../fixtures/demo/documents/INV-2026-51067.docx")),
];

fn fresh_demo(dir: &std::path::Path, name: &str) -> Result<Workspace, Error> {
    fresh_demo_with(dir, name, WorkspaceOptions::default())
}

fn fresh_demo_with(dir: &std::path::Path, name: &str, opts: WorkspaceOptions) -> Result<Workspace, Error> {
    let path = dir.join(format!("{name}.countersign"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Ok(countersign_kernel::open::create(&path, countersign_kernel::open::Start::Demo, opts)?.0)
}

fn scalar(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap_or(-1)
}

/// Writes the kernel made to records: the length of the data history.
fn history_len(ws: &Workspace) -> i64 {
    scalar(ws.raw_connection(), "SELECT count(*) FROM data_history")
}

/// Every value of every record changed since history entry `since` is one the save path
/// would accept now (coerces for its field, no unsafe characters in text).
fn stored_values_are_valid(ws: &Workspace, since: i64) -> Result<(), String> {
    let conn = ws.raw_connection();
    let mut stmt = conn
        .prepare("SELECT DISTINCT object, record_id FROM data_history WHERE seq > ?1 AND op != 'delete'")
        .map_err(|e| e.to_string())?;
    let changed: Vec<(String, String)> = stmt
        .query_map([since], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(|e| e.to_string())?
        .flatten()
        .collect();
    let system = ws.system_session().map_err(|e| e.to_string())?;
    let catalog = ws.catalog().map_err(|e| e.to_string())?;
    for (object, id) in changed {
        let Ok(record) = system.get(&object, &id) else { continue };
        let Ok(meta) = catalog.object_meta(&object) else { continue };
        for field in meta.fields() {
            let v = record.fields.get(&field.key).cloned().unwrap_or(Value::Null);
            if v.is_null() {
                continue;
            }
            if let Err(e) = value::coerce(field, &v) {
                return Err(format!(
                    "{object} {id}.{} = {} does not coerce: {e}",
                    field.key,
                    clip(&v.to_string())
                ));
            }
            if let Some(s) = v.as_str() {
                if let Some(c) = value::unsafe_char(s, field.field_type == FieldType::LongText) {
                    return Err(format!("{object} {id}.{} holds U+{:04X}", field.key, c as u32));
                }
            }
        }
    }
    Ok(())
}

/// With `COUNTERSIGN_FUZZ_KEEP=DIR`, each case's input is written to `DIR/case-N.EXT`, to
/// replay a finding or add it to the regression corpus.
fn keep_input(case: u64, ext: &str, bytes: &[u8]) {
    if let Some(dir) = std::env::var_os("COUNTERSIGN_FUZZ_KEEP") {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(std::path::Path::new(&dir).join(format!("case-{case}.{ext}")), bytes);
    }
}

// ---------------------------------------------------------------- documents

struct Documents {
    name: String,
    extension: &'static str,
    seeds: Vec<Vec<u8>>,
    /// For DOCX: the seed's `document.xml`, mutated and re-zipped.
    docx_xml: Option<Vec<u8>>,
    tokens: Vec<&'static [u8]>,
    limits: Limits,
}

impl Documents {
    fn new(name: &str) -> Result<Documents, Error> {
        let extension = match name {
            "documents-text" => "txt",
            "documents-markdown" => "md",
            "documents-html" => "html",
            "documents-email" => "eml",
            "documents-pdf" => "pdf",
            _ => "docx",
        };
        let seeds: Vec<Vec<u8>> = SEED_DOCUMENTS
            .iter()
            .filter(|(n, _)| n.ends_with(&format!(".{extension}")))
            .map(|(_, b)| b.to_vec())
            .collect();
        let docx_xml = (extension == "docx").then(|| {
            let mut zip = zip::ZipArchive::new(std::io::Cursor::new(seeds[0].clone())).expect("seed docx");
            let mut xml = vec![];
            std::io::Read::read_to_end(&mut zip.by_name("word/document.xml").expect("seed xml"), &mut xml)
                .expect("seed xml reads");
            xml
        });
        let tokens: Vec<&'static [u8]> = match extension {
            "pdf" => vec![
                b"[",
                b"]",
                b"<<",
                b">>",
                b"(",
                b")",
                b"\\",
                b"/Filter /FlateDecode",
                b" 0 R ",
                b"stream\n",
                b"endstream",
                b"obj",
                b"endobj",
                b"xref",
                b"trailer",
                b"/Parent 2 0 R",
                b"/Kids [3 0 R 3 0 R]",
                b"99999999999",
                b"-1",
                b"/Length 999999",
                b"BT",
                b"ET",
                b"Tj",
                b"TJ",
                b"Do",
                b"%%EOF",
            ],
            "html" => vec![
                b"<script>",
                b"</script>",
                b"<style>",
                b"<!--",
                b"-->",
                b"<p>",
                b"<td>",
                b"</td>",
                b"&#x",
                b"&#",
                b"&amp;",
                b";",
                b"<",
                b">",
                b"<head>",
                b"\xff\xfe",
            ],
            "eml" => vec![
                b"\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n",
                b"\r\n--b\r\n",
                b"--b--",
                b"=?utf-8?B?",
                b"?=",
                b"Content-Transfer-Encoding: base64\r\n",
                b"Content-Transfer-Encoding: quoted-printable\r\n",
                b"=\r\n",
                b"=FF",
                b"\r\n\r\n",
                b"Subject: ",
                b"From: <",
                b"text/html",
            ],
            "docx" => vec![
                b"<w:p>",
                b"</w:p>",
                b"<w:p/>",
                b"<w:t>",
                b"</w:t>",
                b"<w:tab/>",
                b"<w:br/>",
                b"&amp;",
                b"&#0;",
                b"<!DOCTYPE x [<!ENTITY a \"aaaa\">]>",
                b"&a;",
                b"<![CDATA[",
                b"]]>",
                b"<",
                b"\"",
            ],
            _ => vec![
                b"\n",
                b"\r\n",
                b"\r",
                b"\t",
                b"\xef\xbb\xbf",
                b"\xff",
                b"\x00",
                b"# ",
                b"| a | b |",
                b"Total due: ",
            ],
        };
        let limits = Limits { deadline: std::time::Duration::from_secs(5), ..Limits::default() };
        Ok(Documents { name: name.into(), extension, seeds, docx_xml, tokens, limits })
    }

    fn bytes(&self, rng: &mut Rng) -> Vec<u8> {
        if self.extension == "pdf" && rng.chance(0.7) {
            let seed = rng.pick(&self.seeds).clone();
            return pdf::rebuild(rng, &seed, &self.tokens);
        }
        if let (Some(xml), true) = (&self.docx_xml, rng.chance(0.6)) {
            let mut xml = xml.clone();
            gen::mutate(rng, &mut xml, &self.tokens);
            let mut out = std::io::Cursor::new(Vec::new());
            let mut w = zip::ZipWriter::new(&mut out);
            let opts = zip::write::SimpleFileOptions::default();
            let _ = w.start_file("word/document.xml", opts);
            let _ = std::io::Write::write_all(&mut w, &xml);
            let _ = w.finish();
            return out.into_inner();
        }
        let mut data = rng.pick(&self.seeds).clone();
        gen::mutate(rng, &mut data, &self.tokens);
        data
    }
}

impl crate::Target for Documents {
    fn name(&self) -> &str {
        &self.name
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        let bytes = self.bytes(rng);
        keep_input(case, self.extension, &bytes);
        match ingest(&format!("fuzz.{}", self.extension), bytes, &self.limits) {
            Ok(doc) => match document_problem(&doc, &self.limits) {
                Some(p) => Outcome::Finding("invalid_document", p),
                None => Outcome::Passed,
            },
            Err(e) if e.code.as_str().starts_with("document.") => Outcome::Refused(e),
            Err(e) => Outcome::Finding("untyped", format!("{}: {}", e.code.as_str(), clip(&e.message))),
        }
    }
}

/// PDFs taken apart into objects, mutated where the parsers look (dictionaries, and the
/// inflated content streams the text is drawn by), and put back together with a correct
/// cross-reference table and stream lengths, so most cases get past the file structure.
mod pdf {
    use crate::gen::{self, Rng};
    use std::io::{Read, Write};

    /// Operators and operands of content streams.
    const CONTENT: &[&[u8]] = &[
        b"BT ",
        b" ET",
        b"/F1 12 Tf ",
        b"72 720 Td ",
        b"(Invoice 7) Tj ",
        b"[(A) -120 (B)] TJ ",
        b"[",
        b"]",
        b"(",
        b")",
        b"\\",
        b"<48656c6c6f> Tj ",
        b"T* ",
        b"' ",
        b"q ",
        b" Q",
        b"1 0 0 1 0 0 cm ",
        b"/X0 Do ",
        b"BI ",
        b" ID ",
        b" EI",
        b"99999999999 ",
        b"-0.0 ",
        b"1e400 ",
    ];

    fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
        hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
    }

    /// `(number, body)` of each `N G obj … endobj`, and the root object's number.
    fn objects(pdf: &[u8]) -> (Vec<(u32, Vec<u8>)>, u32) {
        let mut out = vec![];
        let mut at = 0;
        while let Some(o) = find(pdf, b" obj", at) {
            let line_start = pdf[..o].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
            let head = String::from_utf8_lossy(&pdf[line_start..o]).to_string();
            let num = head.split_whitespace().next().and_then(|n| n.parse::<u32>().ok());
            let Some(end) = find(pdf, b"endobj", o) else { break };
            if let Some(n) = num {
                out.push((n, pdf[o + 4..end].to_vec()));
            }
            at = end + 6;
        }
        let root = find(pdf, b"/Root ", 0)
            .and_then(|i| {
                String::from_utf8_lossy(&pdf[i + 6..(i + 16).min(pdf.len())])
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse().ok())
            })
            .unwrap_or(1);
        (out, root)
    }

    /// The stream of a body, inflated when it is Flate-encoded: `(dict, data, was_flate)`.
    fn stream(body: &[u8]) -> Option<(Vec<u8>, Vec<u8>, bool)> {
        let s = find(body, b"stream", 0)?;
        let e = find(body, b"endstream", s)?;
        let dict = body[..s].to_vec();
        let mut data_start = s + 6;
        while body.get(data_start).is_some_and(|b| *b == b'\r' || *b == b'\n') {
            data_start += 1;
        }
        let data = body[data_start..e.max(data_start)].to_vec();
        let flate = find(&dict, b"FlateDecode", 0).is_some();
        if flate {
            let mut inflated = vec![];
            flate2::read::ZlibDecoder::new(data.as_slice()).take(1 << 20).read_to_end(&mut inflated).ok()?;
            return Some((dict, inflated, true));
        }
        Some((dict, data, false))
    }

    fn with_length(dict: &[u8], len: usize, flate: bool) -> Vec<u8> {
        let text = String::from_utf8_lossy(dict).to_string();
        let mut out = String::new();
        let mut words = text.split("/Length").collect::<Vec<_>>().into_iter();
        out.push_str(words.next().unwrap_or_default());
        for rest in words {
            // Drop the old length's number.
            let rest = rest.trim_start();
            let skip = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            out.push_str(&rest[skip..]);
        }
        if !flate {
            out = out.replace("/Filter /FlateDecode", "");
        }
        let close = out.rfind(">>").unwrap_or(out.len());
        out.insert_str(close, &format!(" /Length {len} "));
        out.into_bytes()
    }

    pub fn rebuild(rng: &mut Rng, seed: &[u8], tokens: &[&'static [u8]]) -> Vec<u8> {
        let (mut objs, root) = objects(seed);
        if objs.is_empty() {
            return seed.to_vec();
        }
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(objs.len());
            let body = objs[i].1.clone();
            objs[i].1 = match stream(&body) {
                Some((dict, mut data, flate)) if rng.chance(0.7) => {
                    gen::mutate(rng, &mut data, CONTENT);
                    let keep_flate = flate && rng.chance(0.8);
                    let data = if keep_flate {
                        let mut z = flate2::write::ZlibEncoder::new(vec![], flate2::Compression::fast());
                        let _ = z.write_all(&data);
                        z.finish().unwrap_or_default()
                    } else {
                        data
                    };
                    let mut b = with_length(&dict, data.len(), keep_flate);
                    b.extend_from_slice(b"stream\n");
                    b.extend_from_slice(&data);
                    b.extend_from_slice(b"\nendstream");
                    b
                }
                Some(_) => body,
                None => {
                    let mut b = body;
                    gen::mutate(rng, &mut b, tokens);
                    b
                }
            };
        }
        if rng.chance(0.1) {
            let copy = objs[rng.below(objs.len())].clone();
            let n = objs.iter().map(|o| o.0).max().unwrap_or(0) + 1;
            objs.push((n, copy.1));
        }
        let mut out = b"%PDF-1.4\n".to_vec();
        let max = objs.iter().map(|o| o.0).max().unwrap_or(0).min(100_000);
        let mut offsets = vec![None; max as usize + 1];
        for (n, body) in &objs {
            if let Some(slot) = offsets.get_mut(*n as usize) {
                *slot = Some(out.len());
            }
            let _ = write!(out, "{n} 0 obj");
            out.extend_from_slice(body);
            out.extend_from_slice(b"endobj\n");
        }
        let xref = out.len();
        let _ = write!(out, "xref\n0 {}\n", offsets.len());
        for (i, o) in offsets.iter().enumerate() {
            match o {
                Some(at) => {
                    let _ = writeln!(out, "{at:010} 00000 n ");
                }
                None => {
                    let _ = writeln!(out, "0000000000 {} f ", if i == 0 { 65535 } else { 0 });
                }
            }
        }
        let _ = write!(
            out,
            "trailer\n<< /Size {} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            offsets.len()
        );
        out
    }
}

/// What a read document must be: text within the limits, segments in order, on char
/// boundaries, inside the text.
fn document_problem(doc: &Document, limits: &Limits) -> Option<String> {
    if doc.text.is_empty() {
        return Some("a document with no text was returned".into());
    }
    if doc.text.chars().count() > limits.max_chars || doc.segments.len() > limits.max_segments {
        return Some(format!("{} chars, {} segments past the limits", doc.text.len(), doc.segments.len()));
    }
    let mut last = 0;
    for s in &doc.segments {
        if s.start < last
            || s.start > s.end
            || s.end > doc.text.len()
            || !doc.text.is_char_boundary(s.start)
            || !doc.text.is_char_boundary(s.end)
        {
            return Some(format!(
                "segment {s:?} is out of order or outside the text ({} bytes)",
                doc.text.len()
            ));
        }
        last = s.end;
    }
    None
}

// ---------------------------------------------------------------- query specs

/// A field as specs are built from it: key, type, picklist values, lookup target.
type FieldShape = (String, FieldType, Vec<String>, Option<String>);

/// What the demo's metadata offers to build specs from.
struct Vocabulary {
    objects: Vec<String>,
    /// object → (field key, type, picklist values, lookup target)
    fields: HashMap<String, Vec<FieldShape>>,
    words: Vec<String>,
}

impl Vocabulary {
    fn of(def: &WorkspaceDefinition) -> Vocabulary {
        let mut fields = HashMap::new();
        let mut words = vec![];
        for o in &def.objects {
            words.push(o.label.clone());
            let fs = o
                .fields
                .iter()
                .map(|f| {
                    words.push(f.label.clone());
                    let values = f.values.iter().flatten().map(|v| v.value.clone()).collect::<Vec<_>>();
                    words.extend(values.iter().cloned());
                    (f.key.clone(), f.field_type, values, f.target.clone())
                })
                .collect();
            fields.insert(o.key.clone(), fs);
        }
        Vocabulary { objects: def.objects.iter().map(|o| o.key.clone()).collect(), fields, words }
    }

    fn path(&self, rng: &mut Rng, object: &str) -> String {
        let Some(fs) = self.fields.get(object) else { return gen::nasty(rng) };
        match rng.below(10) {
            0 => "id".into(),
            1 => gen::nasty(rng),
            2 | 3 => {
                let lookups: Vec<_> = fs.iter().filter(|f| f.3.is_some()).collect();
                if lookups.is_empty() {
                    return rng.pick(fs).0.clone();
                }
                let l = rng.pick(&lookups);
                let target = l.3.clone().unwrap_or_default();
                let sub = self.path(rng, &target);
                format!("{}.{sub}", l.0)
            }
            _ => rng.pick(fs).0.clone(),
        }
    }

    fn value_for(&self, rng: &mut Rng, object: &str, path: &str) -> Value {
        let field = self.fields.get(object).and_then(|fs| fs.iter().find(|f| f.0 == path));
        match (field, rng.below(4)) {
            (Some((_, FieldType::Picklist, values, _)), 0..=2) if !values.is_empty() => {
                json!(rng.pick(values))
            }
            (Some((_, FieldType::Date | FieldType::Datetime, ..)), 0..=2) => json!(gen::date(rng)),
            (Some((_, FieldType::Number | FieldType::Currency, ..)), 0..=2) => gen::number(rng),
            (Some((_, FieldType::Boolean, ..)), 0..=2) => json!(rng.chance(0.5)),
            _ => gen::any_json(rng, 1, &self.words),
        }
    }

    /// A condition tree of at most `budget` nodes (shared with the caller's siblings).
    fn condition(&self, rng: &mut Rng, object: &str, depth: usize, budget: &mut usize) -> Value {
        *budget = budget.saturating_sub(1);
        if depth > 0 && *budget > 0 && rng.chance(0.3) {
            let n = rng.size(3, 1500).min(*budget);
            let children: Vec<Value> =
                (0..n).map(|_| self.condition(rng, object, depth - 1, budget)).collect();
            let (key, value) = match rng.below(3) {
                0 => ("all", Value::Array(children)),
                1 => ("any", Value::Array(children)),
                _ => ("not", children.into_iter().next().unwrap_or(json!({}))),
            };
            return Value::Object([(key.to_string(), value)].into_iter().collect());
        }
        if rng.chance(0.005) {
            // A chain of `not` far deeper than any person writes.
            let mut c = json!({"field": "id", "op": "is_set"});
            for _ in 0..rng.below(5000) {
                // Not `json!`, which would copy the whole chain at every step.
                c = Value::Object([("not".to_string(), c)].into_iter().collect());
            }
            return c;
        }
        let field = self.path(rng, object);
        let op = *rng.pick(&[
            "eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "contains", "is_set", "is_blank", "like",
            "",
        ]);
        let mut c = json!({ "field": field, "op": op });
        match rng.below(6) {
            0 => c["otherField"] = json!(self.path(rng, object)),
            1 => {
                let n = rng.size(5, 40_000);
                c["value"] = Value::Array(
                    (0..n)
                        .map(|i| {
                            if i < 20 {
                                self.value_for(rng, object, &field)
                            } else {
                                json!(format!("v{i}"))
                            }
                        })
                        .collect(),
                );
            }
            2 => {}
            _ => c["value"] = self.value_for(rng, object, &field),
        }
        c
    }

    fn spec(&self, rng: &mut Rng) -> Value {
        let object = if rng.chance(0.9) { rng.pick(&self.objects).clone() } else { gen::nasty(rng) };
        let mut spec = json!({ "object": object });
        if rng.chance(0.7) {
            let n = rng.size(5, 3000);
            spec["fields"] = Value::Array((0..n).map(|_| json!(self.path(rng, &object))).collect());
        }
        if rng.chance(0.7) {
            spec["filters"] = self.condition(rng, &object, 4, &mut 3000);
        }
        if rng.chance(0.4) {
            let n = rng.size(3, 200);
            spec["sort"] = Value::Array(
                (0..n)
                    .map(|_| json!({"field": self.path(rng, &object), "direction": rng.pick(&["asc", "desc", "up"])}))
                    .collect(),
            );
        }
        for key in ["limit", "offset"] {
            if rng.chance(0.4) {
                spec[key] = rng
                    .pick(&[
                        json!(0),
                        json!(1),
                        json!(100),
                        json!(10_000),
                        json!(10_001),
                        json!(-1),
                        json!(4_294_967_296u64),
                        json!("5"),
                        json!(1.5),
                    ])
                    .clone();
            }
        }
        if rng.chance(0.1) {
            gen::mutate_json(rng, &mut spec, &self.words);
        }
        spec
    }
}

/// Field paths a user may read, per object (the first segment of a path).
fn readable_fields(ws: &Workspace, user: &str) -> HashMap<String, BTreeSet<String>> {
    let mut out = HashMap::new();
    let Ok(session) = ws.session(user) else { return out };
    for o in &demo_definition().objects {
        if let Ok(view) = session.describe_object(&o.key) {
            let mut keys: BTreeSet<String> = view.fields.iter().map(|f| f.key.clone()).collect();
            keys.insert("id".into());
            out.insert(o.key.clone(), keys);
        }
    }
    out
}

struct Queries {
    ws: Workspace,
    vocab: Vocabulary,
    readable: HashMap<String, HashMap<String, BTreeSet<String>>>,
}

impl Queries {
    fn new(dir: &std::path::Path) -> Result<Queries, Error> {
        let ws = fresh_demo(dir, "query-specs")?;
        let readable = USERS.iter().map(|u| (u.to_string(), readable_fields(&ws, u))).collect();
        Ok(Queries { ws, vocab: Vocabulary::of(&demo_definition()), readable })
    }
}

impl crate::Target for Queries {
    fn name(&self) -> &str {
        "query-specs"
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        let user = *rng.pick(USERS);
        let spec = self.vocab.spec(rng);
        keep_input(case, "json", spec.to_string().as_bytes());
        let session = match self.ws.session(user) {
            Ok(s) => s,
            Err(e) => return typed(e),
        };
        // As the product receives a spec: as text (the CLI, the app, the model's answer).
        let parsed = match QuerySpec::parse(&spec.to_string()) {
            Ok(s) => s,
            Err(e) => return typed(e),
        };
        match session.query(&parsed) {
            Ok(result) => {
                let readable = self.readable.get(user).and_then(|r| r.get(&result.object));
                for path in &result.fields {
                    let first = path.split('.').next().unwrap_or_default();
                    if !readable.is_some_and(|r| r.contains(first)) {
                        return Outcome::Finding("leak", format!("{user} got `{path}` of {}", result.object));
                    }
                }
                Outcome::Passed
            }
            Err(e) => typed(e),
        }
    }
}

// ---------------------------------------------------------------- definitions

struct Definitions {
    dir: std::path::PathBuf,
    ws: Workspace,
    base: Value,
    words: Vec<String>,
}

impl Definitions {
    fn new(dir: &std::path::Path) -> Result<Definitions, Error> {
        let mut base = serde_json::to_value(demo_definition()).map_err(|e| Error::internal(e.to_string()))?;
        base.as_object_mut().map(|m| m.remove("data"));
        let words = Vocabulary::of(&demo_definition()).words;
        let ws = Self::fresh(dir, &base)?;
        Ok(Definitions { dir: dir.to_path_buf(), ws, base, words })
    }

    /// A workspace holding the demo definition and no records.
    fn fresh(dir: &std::path::Path, base: &Value) -> Result<Workspace, Error> {
        let path = dir.join("definitions.countersign");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut ws = Workspace::create(&path, WorkspaceOptions::default())?;
        ws.deploy(&WorkspaceDefinition::from_json(base)?, &DeployOptions::default())?;
        Ok(ws)
    }

    fn definition(&self, rng: &mut Rng) -> Value {
        let mut def = self.base.clone();
        for _ in 0..1 + rng.below(3) {
            gen::mutate_json(rng, &mut def, &self.words);
        }
        if rng.chance(0.02) {
            // An object with far more fields than SQLite has columns.
            let n = 1000 + rng.below(3000);
            let fields = def.get_mut("objects").and_then(|o| o.get_mut(0)).and_then(|o| o.get_mut("fields"));
            if let Some(fields) = fields.and_then(Value::as_array_mut) {
                for i in 0..n {
                    fields.push(json!({"key": format!("f{i}"), "label": format!("F{i}"), "type": "text"}));
                }
            }
        }
        def
    }
}

impl crate::Target for Definitions {
    fn name(&self) -> &str {
        "definitions"
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        let candidate = self.definition(rng);
        keep_input(case, "json", candidate.to_string().as_bytes());
        let def = match WorkspaceDefinition::from_json(&candidate) {
            Ok(d) => d,
            Err(e) => return typed(e),
        };
        let generation = self.ws.generation();
        let opts = DeployOptions { force: rng.chance(0.3), user: Some((*rng.pick(USERS)).to_string()) };
        match self.ws.deploy(&def, &opts) {
            Ok(_) => {
                // The deployed workspace must open and describe itself for each of its users.
                let users: Vec<String> = def.users.iter().map(|u| u.key.clone()).collect();
                for u in users.iter().take(5) {
                    if let Ok(s) = self.ws.session(u) {
                        let _ = s.describe_workspace();
                    }
                }
                let reopened = countersign_kernel::open::open(self.ws.path(), WorkspaceOptions::default());
                if let Err(e) = reopened {
                    return Outcome::Finding(
                        "unopenable",
                        format!("{}: {}", e.code.as_str(), clip(&e.message)),
                    );
                }
                match Self::fresh(&self.dir, &self.base) {
                    Ok(ws) => self.ws = ws,
                    Err(e) => return Outcome::Finding("setup", e.message),
                }
                Outcome::Passed
            }
            Err(e) => {
                if self.ws.generation() != generation {
                    return Outcome::Finding(
                        "half_deploy",
                        format!("generation moved on a refused deploy: {e}"),
                    );
                }
                typed(e)
            }
        }
    }
}

// ---------------------------------------------------------------- CSV import

struct CsvImport {
    dir: std::path::PathBuf,
    ws: Workspace,
    rows: HashMap<String, (Vec<String>, Vec<Vec<String>>)>,
    vocab: Vocabulary,
    cases_on_ws: u64,
}

impl CsvImport {
    fn new(dir: &std::path::Path) -> Result<CsvImport, Error> {
        let mut rows = HashMap::new();
        for (path, text) in DEMO_DATA {
            let object = path.trim_start_matches("data/").trim_end_matches(".csv");
            let mut r = csv::Reader::from_reader(text.as_bytes());
            let headers: Vec<String> =
                r.headers().map(|h| h.iter().map(String::from).collect()).unwrap_or_default();
            let body: Vec<Vec<String>> =
                r.records().flatten().map(|rec| rec.iter().map(String::from).collect()).collect();
            rows.insert(object.to_string(), (headers, body));
        }
        Ok(CsvImport {
            dir: dir.to_path_buf(),
            ws: fresh_demo(dir, "csv-import")?,
            rows,
            vocab: Vocabulary::of(&demo_definition()),
            cases_on_ws: 0,
        })
    }

    fn csv(&self, rng: &mut Rng, object: &str) -> Vec<u8> {
        let (headers, body) = &self.rows[object];
        let mut headers = headers.clone();
        let mut body = body.clone();
        if rng.chance(0.7) {
            // New records: without the id column, rows are creates.
            if let Some(i) = headers.iter().position(|h| h == "id") {
                headers.remove(i);
                for row in body.iter_mut() {
                    if i < row.len() {
                        row.remove(i);
                    }
                }
            }
        }
        if rng.chance(0.1) {
            let i = rng.below(headers.len());
            headers[i] =
                if rng.chance(0.5) { gen::nasty(rng) } else { headers[rng.below(headers.len())].clone() };
        }
        let mut lines: Vec<Vec<String>> = vec![headers.clone()];
        for _ in 0..rng.size(4, 300) {
            let mut row = rng.pick(&body).clone();
            for cell in row.iter_mut() {
                if rng.chance(0.15) {
                    *cell = match rng.below(3) {
                        0 => gen::nasty(rng),
                        1 => gen::date(rng),
                        _ => gen::phrase(rng, &self.vocab.words),
                    };
                }
            }
            if rng.chance(0.05) {
                row.truncate(rng.below(row.len() + 1));
            }
            lines.push(row);
        }
        let mut w = csv::WriterBuilder::new()
            .terminator(if rng.chance(0.3) { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') })
            .flexible(true)
            .from_writer(vec![]);
        for l in &lines {
            let _ =
                w.write_record(
                    l.iter().map(|c| if c.is_empty() && l == &headers { " " } else { c.as_str() }),
                );
        }
        let mut out = w.into_inner().unwrap_or_default();
        if rng.chance(0.05) {
            out.splice(0..0, b"\xef\xbb\xbf".iter().copied());
        }
        if rng.chance(0.1) {
            gen::mutate(rng, &mut out, &[b"\"", b",", b"\r\n", b"\n", b"\r", b"=", b"\x00"]);
        }
        out
    }
}

impl crate::Target for CsvImport {
    fn name(&self) -> &str {
        "csv-import"
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        self.cases_on_ws += 1;
        if self.cases_on_ws > 2000 {
            match fresh_demo(&self.dir, "csv-import") {
                Ok(ws) => self.ws = ws,
                Err(e) => return Outcome::Finding("setup", e.message),
            }
            self.cases_on_ws = 0;
        }
        let object = OBJECTS[rng.below(OBJECTS.len())];
        let bytes = self.csv(rng, object);
        keep_input(case, "csv", &bytes);
        let user = *rng.pick(USERS);
        let opts = ImportOptions {
            mode: if rng.chance(0.5) { ImportMode::SkipInvalid } else { ImportMode::AllOrNothing },
            dry_run: rng.chance(0.2),
            mapping: None,
        };
        let since = history_len(&self.ws);
        let last_seq = scalar(self.ws.raw_connection(), "SELECT coalesce(max(seq), 0) FROM data_history");
        let session = match self.ws.session(user) {
            Ok(s) => s,
            Err(e) => return typed(e),
        };
        let result = import_csv(&session, object, bytes.as_slice(), &opts);
        let written = history_len(&self.ws) - since;
        match result {
            Ok(report) => {
                if (opts.dry_run || !report.committed) && written != 0 {
                    return Outcome::Finding(
                        "invalid_write",
                        format!("{written} history rows from an import that wrote nothing"),
                    );
                }
                match stored_values_are_valid(&self.ws, last_seq) {
                    Ok(()) => Outcome::Passed,
                    Err(p) => Outcome::Finding("invalid_write", p),
                }
            }
            Err(e) => {
                if written != 0 {
                    return Outcome::Finding(
                        "invalid_write",
                        format!("{written} history rows from a refused import"),
                    );
                }
                typed(e)
            }
        }
    }
}

// ---------------------------------------------------------------- model output

struct Capability {
    name: String,
    dir: std::path::PathBuf,
    ws: Workspace,
    /// Moved a minute on between cases, so requests-per-minute limits do not refuse most of
    /// them before the model's answer is reached.
    clock: Arc<FixedClock>,
    model: ModelChoice,
    documents: Vec<Document>,
    ids: HashMap<String, Vec<String>>,
    words: Vec<String>,
    cases_on_ws: u64,
}

const OBJECTS: &[&str] = &["account", "contact", "opportunity", "invoice", "invoice_line", "note"];

impl Capability {
    fn new(name: &str, dir: &std::path::Path) -> Result<Capability, Error> {
        let clock = Arc::new(FixedClock::at("2026-11-29T10:00:00Z"));
        let ws = fresh_demo_with(dir, name, Self::options(&clock))?;
        let model = ModelChoice::unstored(
            "http://127.0.0.1:9/v1",
            "fuzz-model",
            "sha256:fuzz".into(),
            "fuzz".into(),
            json!({}),
        );
        let documents = SEED_DOCUMENTS
            .iter()
            .filter(|(n, _)| n.starts_with("INV-"))
            .filter_map(|(n, b)| ingest(n, b.to_vec(), &Limits::default()).ok())
            .collect();
        let mut ids = HashMap::new();
        for o in OBJECTS {
            let table = countersign_kernel::records::save::table_of(o);
            let mut stmt = ws
                .raw_connection()
                .prepare(&format!("SELECT id FROM {table} LIMIT 200"))
                .map_err(|e| Error::internal(e.to_string()))?;
            let list: Vec<String> = stmt
                .query_map([], |r| r.get(0))
                .map_err(|e| Error::internal(e.to_string()))?
                .flatten()
                .collect();
            ids.insert(o.to_string(), list);
        }
        let words = Vocabulary::of(&demo_definition()).words;
        Ok(Capability {
            name: name.into(),
            dir: dir.to_path_buf(),
            ws,
            model,
            documents,
            ids,
            words,
            clock,
            cases_on_ws: 0,
        })
    }

    fn options(clock: &Arc<FixedClock>) -> WorkspaceOptions {
        WorkspaceOptions { clock: clock.clone(), ..WorkspaceOptions::default() }
    }

    /// A model's failure to keep the contract, or the endpoint's, is a typed refusal here:
    /// only a storage or internal error is a finding.
    fn typed_model(e: Error) -> Outcome {
        let code = e.code.as_str();
        if code == "contract" || code.starts_with("integration.") {
            Outcome::Refused(e)
        } else {
            typed(e)
        }
    }

    fn response(
        rng: &mut Rng,
        schema: Option<&Value>,
        vocab: &[String],
    ) -> countersign_kernel::Result<ChatResponse> {
        if rng.chance(0.03) {
            return Err(Error::new(
                *rng.pick(&[
                    Code::IntegrationTimeout,
                    Code::IntegrationMalformed,
                    Code::IntegrationTruncated,
                    Code::ContextLength,
                ]),
                "the fuzzer's endpoint failed",
            ));
        }
        let value = gen::from_schema(rng, schema.unwrap_or(&json!({})), vocab, 8);
        Ok(ChatResponse {
            content: gen::model_text(rng, &value),
            usage: Default::default(),
            finish_reason: Some(if rng.chance(0.05) { "length" } else { "stop" }.into()),
            timings: None,
            first_token_ms: None,
            total_ms: 1.0,
        })
    }

    fn vocab(prompt: &countersign_kernel::ai::provider::Prompt, words: &[String]) -> Vec<String> {
        let texts: Vec<&str> = prompt
            .parts
            .iter()
            .map(|p| match p {
                Part::Request(t) => t.as_str(),
                Part::Untrusted { content, .. } => content.as_str(),
            })
            .collect();
        let mut v = gen::vocabulary(&texts);
        v.extend(words.iter().take(200).cloned());
        v
    }

    fn ask(&self, rng: &mut Rng, s: &Session<'_>) -> Result<(), Outcome> {
        let question = gen::phrase(rng, &self.words);
        let answer = self.scripted(rng, s, &mut Ask { question }, 3)?;
        let Some(result) = answer.result else { return Ok(()) };
        let readable = readable_fields(&self.ws, &s.user().key);
        let fields = readable.get(&result.object);
        for path in &result.fields {
            let first = path.split('.').next().unwrap_or_default();
            if !fields.is_some_and(|f| f.contains(first)) {
                return Err(Outcome::Finding("leak", format!("Ask gave `{path}` of {}", result.object)));
            }
        }
        Ok(())
    }

    /// A capability run with generated answers in place of the model's, through the same
    /// `begin` and `advance` the driver calls; more than `calls` model calls is a finding.
    fn scripted<C: drive::Capability>(
        &self,
        rng: &mut Rng,
        s: &Session<'_>,
        capability: &mut C,
        calls: usize,
    ) -> Result<C::Answer, Outcome> {
        let mut run = capability.begin(s, self.model.clone()).map_err(Self::typed_model)?;
        for _ in 0..calls {
            let request = C::request(&run).clone();
            let vocab = Self::vocab(&request.prompt, &self.words);
            let resp = Self::response(rng, request.schema.as_ref().map(|(_, s)| s), &vocab);
            // What the driver does with a response before `advance`.
            let resp = s.receive(C::invocation_mut(&mut run), &request, resp).map_err(Self::typed_model)?;
            match capability.advance(s, run, resp).map_err(Self::typed_model)? {
                Step::Call(next) => run = next,
                Step::Done(answer) => return Ok(answer),
            }
        }
        Err(Outcome::Finding("unbounded", format!("{} made more than {calls} model calls", C::KEY)))
    }

    fn extract(&self, rng: &mut Rng, s: &Session<'_>) -> Result<(), Outcome> {
        let doc = if rng.chance(0.8) && !self.documents.is_empty() {
            rng.pick(&self.documents).clone()
        } else {
            let text = gen::phrase(rng, &self.words);
            ingest("fuzz.txt", text.into_bytes(), &Limits::default()).map_err(typed)?
        };
        let object = *rng.pick(OBJECTS);
        let record = if rng.chance(0.3) {
            self.ids.get(object).filter(|i| !i.is_empty()).map(|i| rng.pick(i).clone())
        } else {
            None
        };
        let mut extract = Extract { document: doc, object: object.to_string(), record };
        let answer = self.scripted(rng, s, &mut extract, 3)?;
        let p = &answer.proposal;
        let view = s.describe_object(&p.object).map_err(Self::typed_model)?;
        let catalog = self.ws.catalog().map_err(Self::typed_model)?;
        let meta = catalog.object_meta(&p.object).map_err(Self::typed_model)?;
        for f in &p.fields {
            let editable = view.fields.iter().any(|v| v.key == f.field && v.access == FieldLevel::Edit);
            if !editable {
                return Err(Outcome::Finding(
                    "invalid_write",
                    format!("proposal {} sets `{}`, which the user cannot edit", p.id, f.field),
                ));
            }
            let def = meta.fields().iter().find(|d| d.key == f.field);
            if let (Some(def), false) = (def, f.value.is_null()) {
                if def.field_type != FieldType::Lookup {
                    if let Err(e) = value::coerce(def, &f.value) {
                        return Err(Outcome::Finding(
                            "invalid_write",
                            format!(
                                "proposal {} sets {} = {}: {e}",
                                p.id,
                                f.field,
                                clip(&f.value.to_string())
                            ),
                        ));
                    }
                }
            }
        }
        s.review_proposal(&p.id).map_err(Self::typed_model)?;
        Ok(())
    }

    fn summarize(&self, rng: &mut Rng, s: &Session<'_>) -> Result<(), Outcome> {
        use countersign_kernel::ai::summarize::recheck;
        let object = *rng.pick(OBJECTS);
        let id = self
            .ids
            .get(object)
            .filter(|i| !i.is_empty())
            .map(|i| rng.pick(i).clone())
            .unwrap_or_else(|| gen::nasty(rng));
        let answer = self.scripted(rng, s, &mut Summarize::new(object, &id), 6)?;
        for sentence in &answer.sentences {
            if let Some(c) = value::unsafe_char(&sentence.text, false) {
                return Err(Outcome::Finding(
                    "unsafe_text",
                    format!("a verified sentence holds U+{:04X}", c as u32),
                ));
            }
        }
        if let Err(e) = recheck(s, &answer) {
            return Err(Outcome::Finding(
                "unverified",
                format!("an accepted summary fails the re-check: {}", clip(&e.message)),
            ));
        }
        Ok(())
    }
}

impl crate::Target for Capability {
    fn name(&self) -> &str {
        &self.name
    }

    fn case(&mut self, rng: &mut Rng, _case: u64) -> Outcome {
        self.cases_on_ws += 1;
        self.clock.advance(chrono::Duration::seconds(61));
        if self.cases_on_ws > 2000 {
            match fresh_demo_with(&self.dir, &self.name, Self::options(&self.clock)) {
                Ok(ws) => self.ws = ws,
                Err(e) => return Outcome::Finding("setup", e.message),
            }
            self.cases_on_ws = 0;
        }
        let history = history_len(&self.ws);
        // Mostly users who may use AI; dan (a viewer) and eve less often.
        let user = *rng.pick(&["ava", "ava", "ben", "ben", "cara", "cara", "dan", "eve"]);
        let outcome = match self.ws.session(user) {
            Err(e) => typed(e),
            Ok(s) => {
                let r = match self.name.as_str() {
                    "ask" => self.ask(rng, &s),
                    "extract" => self.extract(rng, &s),
                    _ => self.summarize(rng, &s),
                };
                match r {
                    Ok(()) => Outcome::Passed,
                    Err(o) => o,
                }
            }
        };
        if history_len(&self.ws) != history {
            return Outcome::Finding("invalid_write", format!("{} wrote to records", self.name));
        }
        let running =
            scalar(self.ws.raw_connection(), "SELECT count(*) FROM ai_trace WHERE outcome = 'running'");
        if running != 0 {
            return Outcome::Finding(
                "trace_left_running",
                format!("{running} trace rows still running after the case"),
            );
        }
        outcome
    }
}
