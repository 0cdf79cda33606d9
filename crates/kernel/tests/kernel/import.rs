//! Importing files: mappings suggested by column name (a field's key or label, another tool's
//! export names) and by content, columns joined into one field, picklist values the object does
//! not hold listed and mapped, spreadsheets and vCards read like CSVs, progress, and a cancel
//! that leaves nothing written.

use crate::common;

use common::*;
use countersign_kernel::open::{self, Start};
use countersign_kernel::records::import::{
    self, FileFormat, ImportMode, ImportOptions, ImportProgress, MatchedBy, SourceTool, Table, Watch,
};
use countersign_kernel::records::templates;
use countersign_kernel::{QuerySpec, Session};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;

fn suggest(
    s: &Session<'_>,
    object: &str,
    format: FileFormat,
    bytes: &[u8],
    tool: Option<SourceTool>,
) -> import::MappingSuggestion {
    import::suggest(s, object, Table::read(format, bytes).unwrap(), tool).unwrap()
}

fn field_of<'a>(m: &'a import::MappingSuggestion, column: &str) -> (Option<&'a str>, MatchedBy) {
    let c = m.columns.iter().find(|c| c.column == column).unwrap_or_else(|| panic!("no column {column}"));
    (c.field.as_deref(), c.matched_by)
}

fn import(
    s: &Session<'_>,
    object: &str,
    format: FileFormat,
    bytes: &[u8],
    opts: &ImportOptions,
) -> import::ImportReport {
    let mut quiet = |_: &ImportProgress| {};
    import::import_file(s, object, format, bytes, opts, Watch { progress: &mut quiet, cancelled: &|| false })
        .unwrap()
}

fn find(s: &Session<'_>, object: &str, field: &str, value: &str) -> Vec<serde_json::Map<String, Value>> {
    let spec =
        json!({"object": object, "filters": {"field": field, "op": "eq", "value": value}, "limit": 10});
    s.query(&QuerySpec::from_json(&spec).unwrap()).unwrap().records
}

const HUBSPOT_CONTACTS: &str =
    "Record ID,First Name,Last Name,Email,Phone Number,Company Name,Job Title,Unsubscribed,Date of birth\n\
101,Ada,Quill,ada@quill.example,+44 20 7946 0001,Globex Holdings,CTO,false,1985-04-12\n\
102,Ben,Stroud,ben@stroud.example,+44 20 7946 0002,Initech GmbH,Buyer,true,1990-11-02\n";

#[test]
fn a_hubspot_export_maps_by_label_by_its_own_names_and_by_content() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let m = suggest(&ava, "contact", FileFormat::Csv, HUBSPOT_CONTACTS.as_bytes(), Some(SourceTool::Hubspot));
    assert_eq!(field_of(&m, "Record ID"), (None, MatchedBy::Unmatched));
    assert_eq!(field_of(&m, "First Name"), (Some("first_name"), MatchedBy::Key));
    assert_eq!(field_of(&m, "Email"), (Some("email"), MatchedBy::Key));
    assert_eq!(field_of(&m, "Phone Number"), (Some("phone"), MatchedBy::Alias));
    assert_eq!(field_of(&m, "Company Name"), (Some("account"), MatchedBy::Alias));
    assert_eq!(field_of(&m, "Job Title"), (Some("title"), MatchedBy::Alias));
    // Nothing in the names: the cells say yes/no and dates, and one field takes each.
    assert_eq!(field_of(&m, "Unsubscribed"), (Some("do_not_call"), MatchedBy::Content));
    assert_eq!(field_of(&m, "Date of birth"), (Some("birthdate"), MatchedBy::Content));
    let detected: Vec<&str> = m.columns.iter().map(|c| c.detected.as_str()).collect();
    assert_eq!(detected, ["number", "text", "text", "email", "phone", "text", "text", "boolean", "date"]);
    // The suggested mapping imports as it is; company names resolve to their accounts.
    let opts = ImportOptions { mapping: Some(m.mapping.clone()), ..Default::default() };
    let r = import(&ava, "contact", FileFormat::Csv, HUBSPOT_CONTACTS.as_bytes(), &opts);
    assert!(r.committed, "{:?}", r.errors);
    let ada = &find(&ava, "contact", "email", "ada@quill.example")[0];
    assert_eq!((ada["account"].as_str(), ada["do_not_call"].as_bool()), (Some("acc_0001"), Some(false)));
}

#[test]
fn first_and_last_names_join_into_one_field_when_the_object_has_no_field_for_each() {
    let dir = tempfile::tempdir().unwrap();
    let t = templates::template("freelance").unwrap();
    let (ws, _) = open::create(
        &dir.path().join("f.countersign"),
        Start::Template { template: t, records: false },
        Default::default(),
    )
    .unwrap();
    let me = ws.session("me").unwrap();
    let google = "Given Name,Family Name,Organization 1 - Name,E-mail 1 - Value,Phone 1 - Value,Address 1 - City,Notes\n\
                  Ada,Lovelace,Analytical Engines Ltd,ada@engines.example,+44 20 7946 0100,London,Met at the fair\n\
                  ,Babbage,Difference Works,charles@works.example,,Cambridge,\n";
    let m = suggest(&me, "client", FileFormat::Csv, google.as_bytes(), Some(SourceTool::GoogleContacts));
    assert_eq!(field_of(&m, "Given Name"), (Some("contact_name"), MatchedBy::Alias));
    assert_eq!(field_of(&m, "Family Name"), (Some("contact_name"), MatchedBy::Alias));
    assert_eq!(field_of(&m, "Organization 1 - Name"), (Some("name"), MatchedBy::Alias));
    assert_eq!(field_of(&m, "Address 1 - City"), (Some("city"), MatchedBy::Alias));
    assert_eq!(field_of(&m, "Notes"), (Some("notes"), MatchedBy::Key));
    let opts = ImportOptions { mapping: Some(m.mapping.clone()), ..Default::default() };
    let r = import(&me, "client", FileFormat::Csv, google.as_bytes(), &opts);
    assert!(r.committed, "{:?}", r.errors);
    assert_eq!(find(&me, "client", "name", "Analytical Engines Ltd")[0]["contact_name"], "Ada Lovelace");
    assert_eq!(find(&me, "client", "name", "Difference Works")[0]["contact_name"], "Babbage");
    // Without a mapping, two columns on one field is a mistake in the header, not a join.
    let e =
        import::import_csv(&me, "client", "name,Client Name\nA,B\n".as_bytes(), &ImportOptions::default())
            .unwrap_err();
    assert!(e.message.contains("both map to `name`"), "{}", e.message);
}

#[test]
fn picklist_values_the_object_does_not_hold_are_listed_then_mapped_or_left_blank() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let csv =
        "Last Name,Department\nOne,Sales\nTwo,Enginering\nThree,Marketing\nFour,Opps\nFive,Enginering\n";
    let m = suggest(&ava, "contact", FileFormat::Csv, csv.as_bytes(), None);
    assert_eq!(field_of(&m, "Department"), (Some("department"), MatchedBy::Key));
    let unknown = &m.unknown_values[0];
    assert_eq!(unknown.field, "department");
    let listed: Vec<(&str, u64, Option<&str>)> =
        unknown.values.iter().map(|v| (v.value.as_str(), v.rows, v.closest.as_deref())).collect();
    // Marketing is retired: not a value a new record may take.
    assert_eq!(listed, [("Enginering", 2, Some("engineering")), ("Marketing", 1, None), ("Opps", 1, None)]);
    // Imported as suggested, those rows fail (and say why); mapped, they pass.
    let mut opts = ImportOptions { mapping: Some(m.mapping.clone()), dry_run: true, ..Default::default() };
    let r = import(&ava, "contact", FileFormat::Csv, csv.as_bytes(), &opts);
    assert_eq!(r.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [3, 4, 5, 6]);
    opts.dry_run = false;
    opts.value_map = BTreeMap::from([(
        "department".to_string(),
        BTreeMap::from([
            ("Enginering".to_string(), "engineering".to_string()),
            ("Marketing".to_string(), "sales".to_string()),
            ("Opps".to_string(), String::new()),
        ]),
    )]);
    let r = import(&ava, "contact", FileFormat::Csv, csv.as_bytes(), &opts);
    assert!(r.committed, "{:?}", r.errors);
    assert_eq!(find(&ava, "contact", "last_name", "Two")[0]["department"], "engineering");
    assert!(find(&ava, "contact", "last_name", "Four")[0].get("department").is_none_or(Value::is_null));
}

/// A minimal `.xlsx` (one sheet of inline strings and numbers), as a spreadsheet program
/// writes the parts calamine reads. Dates are numbers with a date style.
fn xlsx(rows: &[Vec<Value>]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    let mut put = |name: &str, body: String| {
        zip.start_file(name, opts).unwrap();
        zip.write_all(body.as_bytes()).unwrap();
    };
    put("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>"#.into());
    put("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.into());
    put("xl/workbook.xml", r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Accounts" sheetId="1" r:id="rId1"/></sheets></workbook>"#.into());
    put("xl/_rels/workbook.xml.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#.into());
    put("xl/styles.xml", r#"<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>"#.into());
    let mut sheet = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#,
    );
    for (r, row) in rows.iter().enumerate() {
        sheet.push_str(&format!(r#"<row r="{}">"#, r + 1));
        for (c, v) in row.iter().enumerate() {
            let at = format!("{}{}", (b'A' + c as u8) as char, r + 1);
            match v {
                Value::String(s) if s.starts_with("date:") => {
                    sheet.push_str(&format!(r#"<c r="{at}" s="1"><v>{}</v></c>"#, &s[5..]))
                }
                Value::String(s) => {
                    sheet.push_str(&format!(r#"<c r="{at}" t="inlineStr"><is><t>{s}</t></is></c>"#))
                }
                Value::Number(n) => sheet.push_str(&format!(r#"<c r="{at}"><v>{n}</v></c>"#)),
                _ => {}
            }
        }
        sheet.push_str("</row>");
    }
    sheet.push_str("</sheetData></worksheet>");
    put("xl/worksheets/sheet1.xml", sheet);
    zip.finish().unwrap().into_inner()
}

#[test]
fn a_spreadsheet_imports_like_a_csv_with_its_own_row_numbers() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let sheet = xlsx(&[
        vec![json!("Invoice Number"), json!("Account"), json!("Status"), json!("Issue Date"), json!("Total")],
        vec![json!("INV-X-1"), json!("Globex Holdings"), json!("sent"), json!("date:45992"), json!(1250.5)],
        vec![json!("INV-X-2"), json!("acc_0002"), json!("draft"), json!("date:45993"), json!(99)],
        vec![json!("INV-X-3"), json!("Nobody Ltd"), json!("sent"), json!("date:45994"), json!(10)],
    ]);
    let m = suggest(&ava, "invoice", FileFormat::Xlsx, &sheet, None);
    assert_eq!(field_of(&m, "Issue Date").0, Some("issue_date"));
    assert_eq!(m.columns.iter().find(|c| c.column == "Issue Date").unwrap().samples[0], "2025-12-01");
    let opts = ImportOptions {
        mapping: Some(m.mapping.clone()),
        mode: ImportMode::SkipInvalid,
        ..Default::default()
    };
    let r = import(&ava, "invoice", FileFormat::Xlsx, &sheet, &opts);
    // The third data row is the sheet's row 4: its account does not exist.
    assert_eq!(
        (r.imported, r.errors.iter().map(|e| (e.line, e.field.clone())).collect::<Vec<_>>()),
        (2, vec![(4, Some("account".into()))])
    );
    let one = &find(&ava, "invoice", "number", "INV-X-1")[0];
    assert_eq!((one["account"].as_str(), one["issue_date"].as_str()), (Some("acc_0001"), Some("2025-12-01")));
    assert_eq!(one["total"], json!(1250.5));
    // Not a spreadsheet at all: a typed error.
    let e = import::import_file(
        &ava,
        "invoice",
        FileFormat::Xlsx,
        b"not a zip",
        &opts,
        Watch { progress: &mut |_| {}, cancelled: &|| false },
    )
    .unwrap_err();
    assert_eq!(e.code, countersign_kernel::Code::InvalidCsv);
}

const CARDS: &str = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Quill\r\nN:Quill;Ada;;;\r\nORG:Globex Holdings;R&D\r\nTITLE:Chief\r\n  Engineer\r\nEMAIL;TYPE=work:ada@quill.example\r\nEMAIL;TYPE=home,pref:ada.home@quill.example\r\nTEL;TYPE=cell:+44 7700 900001\r\nBDAY:19850412\r\nNOTE:Likes tea\\, not coffee\r\nEND:VCARD\r\n\
BEGIN:VCARD\r\nVERSION:2.1\r\nN:Stroud;Ben\r\nFN;ENCODING=QUOTED-PRINTABLE:Ben Str=C3=B6ud\r\nTEL;WORK:+44 20 7946 0002\r\nEND:VCARD\r\n";

#[test]
fn vcards_import_into_an_object_with_name_email_and_phone_fields() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let m = suggest(&ava, "contact", FileFormat::Vcard, CARDS.as_bytes(), None);
    assert_eq!(m.rows, 2);
    for (column, field) in [
        ("First Name", "first_name"),
        ("Last Name", "last_name"),
        ("Organization", "account"),
        ("Title", "title"),
        ("Email", "email"),
        ("Phone", "phone"),
        ("Birthday", "birthdate"),
    ] {
        assert_eq!(field_of(&m, column).0, Some(field), "{column}");
    }
    let opts = ImportOptions { mapping: Some(m.mapping.clone()), ..Default::default() };
    let r = import(&ava, "contact", FileFormat::Vcard, CARDS.as_bytes(), &opts);
    assert!(r.committed, "{:?}", r.errors);
    let ada = &find(&ava, "contact", "last_name", "Quill")[0];
    // The preferred e-mail, the folded title, the only (mobile) phone, the birthday as a date.
    assert_eq!(ada["email"], "ada.home@quill.example");
    assert_eq!(ada["title"], "Chief Engineer");
    assert_eq!(ada["phone"], "+44 7700 900001");
    assert_eq!(ada["birthdate"], "1985-04-12");
    assert_eq!(ada["account"], "acc_0001");
    assert_eq!(find(&ava, "contact", "last_name", "Stroud")[0]["phone"], "+44 20 7946 0002");
}

#[test]
fn a_cancelled_import_reports_progress_and_leaves_nothing_written() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let mut csv = String::from("name,industry\n");
    for i in 0..2000 {
        csv.push_str(&format!("Bulk {i},software\n"));
    }
    let history = history_rows(&f.ws);
    let mut seen: Vec<ImportProgress> = vec![];
    let mut record = |p: &ImportProgress| seen.push(p.clone());
    let cancel = std::cell::Cell::new(false);
    let stop = || {
        let now = cancel.get();
        cancel.set(true);
        now
    };
    let r = import::import_file(
        &ava,
        "account",
        FileFormat::Csv,
        csv.as_bytes(),
        &ImportOptions::default(),
        Watch { progress: &mut record, cancelled: &stop },
    )
    .unwrap();
    assert!(r.cancelled && !r.committed, "{r:?}");
    assert!(r.rows < 2000 && r.rows >= 500, "stopped at a progress report: {}", r.rows);
    assert_eq!(seen.first().map(|p| (p.rows, p.total)), Some((500, 2000)));
    assert_eq!(history_rows(&f.ws), history);
    assert!(find(&ava, "account", "name", "Bulk 1").is_empty());
    // Not cancelled, the same file imports whole, with a last report at the end.
    let mut last = None;
    let mut record = |p: &ImportProgress| last = Some(p.clone());
    let r = import::import_file(
        &ava,
        "account",
        FileFormat::Csv,
        csv.as_bytes(),
        &ImportOptions::default(),
        Watch { progress: &mut record, cancelled: &|| false },
    )
    .unwrap();
    assert!(r.committed && !r.cancelled);
    assert_eq!(last.map(|p| (p.rows, p.imported)), Some((2000, 2000)));
}

/// An import is one batch of saves: what is derived from its rows (the value index, the name
/// search, the full-text corpus, one history entry per record) is written at its end, and is
/// then what single saves would have written. A row that fails at its write (an id that
/// exists) leaves nothing behind without a savepoint of its own.
#[test]
fn an_import_indexes_its_rows_as_single_saves_would_and_a_failed_write_leaves_nothing() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let history_before = ava.history_of("account", "acc_0001").unwrap();
    let csv = "id,name,billing_city,description,credit_limit\n\
               ,Quillmoor Trading,Reykjavik,Ships zeppelinite by sea,\n\
               acc_0001,Taken Id Ltd,Oslo,Never written zorbalite,\n\
               ,Quillmoor Shipping,Reykjavik,Ships by air,\n\
               ,Broken Row,Oslo,,not a number\n";
    let r = import::import_csv(
        &ava,
        "account",
        csv.as_bytes(),
        &ImportOptions { mode: ImportMode::SkipInvalid, ..Default::default() },
    )
    .unwrap();
    assert_eq!((r.imported, r.failed, r.committed), (2, 2, true), "{:?}", r.errors);
    assert_eq!(r.errors[0].code, countersign_kernel::Code::Duplicate, "{:?}", r.errors);

    // The failed write left nothing: the existing record's history, no stray value, no text.
    assert_eq!(ava.history_of("account", "acc_0001").unwrap(), history_before);
    crate::value_index::assert_index_is_the_tables(&f.ws);
    assert!(ava.search_corpus("zorbalite", 5).unwrap().is_empty());
    let by_name = |needle: &str| {
        let spec = QuerySpec::from_json(&json!({"object": "account", "fields": ["name"], "filters": {"field": "name", "op": "contains", "value": needle}, "sort": [{"field": "name"}]})).unwrap();
        ava.query(&spec)
            .unwrap()
            .records
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(by_name("quillmoor"), vec!["Quillmoor Shipping", "Quillmoor Trading"]);
    assert!(by_name("Taken Id").is_empty());
    assert_eq!(ava.search_corpus("zeppelinite", 5).unwrap().len(), 1);

    // A created record's one history entry reads back as one entry per field.
    let id = ava
        .query(&QuerySpec::from_json(&json!({"object": "account", "filters": {"field": "name", "op": "eq", "value": "Quillmoor Trading"}})).unwrap())
        .unwrap()
        .records[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let h = ava.history_of("account", &id).unwrap();
    let fields: Vec<&str> = h.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, vec!["owner", "name", "billing_city", "description"]);
    assert!(h.iter().all(|e| e.operation == "create" && e.correlation_id == r.correlation_id));
    assert_eq!(h[1].new_value, json!("Quillmoor Trading"));

    // The name index's trigger is back: a single save after the import is found.
    ava.create("account", map(json!({"name": "Quillmoor Freight"}))).unwrap();
    assert_eq!(by_name("quillmoor").len(), 3);
}
