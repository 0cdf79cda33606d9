//! Logs record what happened and how long it took, never values or keys: a canary record value
//! and a canary API key go through every logged path — saves, a CSV import, a document read,
//! Ask, Extract and a refused Summarize against a fake model endpoint that requires the key —
//! and the whole log, at its most detailed level, holds neither.

use crate::common;

use common::fake_model::{fake, model, Answer};
use countersign_kernel::ai::ask::Ask;
use countersign_kernel::ai::extract::Extract;
use countersign_kernel::ai::pipeline::drive::drive;
use countersign_kernel::ai::provider::{Cancel, Secret};
use countersign_kernel::ai::summarize::Summarize;
use countersign_kernel::records::import::{import_csv, ImportOptions};
use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};

const CANARY_VALUE: &str = "Zebracorn Quillfeather";
const CANARY_KEY: &str = "sk-canary-4f1d9b7e2a";

/// Everything the subscriber writes, kept in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn no_record_value_and_no_key_reaches_the_log() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let f = common::demo_made_here();
    let ava = f.ws.session("ava").unwrap();
    let cara = f.ws.session("cara").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let with_key = |url: &str| {
        let mut m = model(url, 0.0);
        m.endpoint.api_key = Some(Secret::new(CANARY_KEY));
        m
    };

    // Saves: a new account named by the canary, then an edit that writes it again elsewhere.
    let saved =
        ava.create("account", common::map(json!({"name": CANARY_VALUE, "industry": "software"}))).unwrap();
    ava.update(
        "account",
        &saved.id,
        common::map(json!({"description": format!("{CANARY_VALUE} notes")})),
        None,
    )
    .unwrap();
    // A refused save whose message quotes the value.
    let refused = ava.create("account", common::map(json!({"name": CANARY_VALUE, "industry": CANARY_VALUE})));
    assert!(refused.unwrap_err().message.contains(CANARY_VALUE), "the refusal quotes the value");
    // A CSV import.
    let csv = format!("name,industry\n{CANARY_VALUE} Two,retail\n");
    let report = import_csv(&ava, "account", csv.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(report.imported, 1);

    // Ask: the question names the canary; the kernel reads it as the account's name, and with
    // nothing else to choose, answers without the model.
    let asked = fake(vec![]);
    let mut ask = Ask { question: format!("Show the account {CANARY_VALUE}.") };
    let answer =
        rt.block_on(drive(&ava, &mut ask, Some(with_key(&asked.url)), &Cancel::default(), &mut |_| {}));
    let answer = answer.unwrap();
    assert_eq!(
        countersign_kernel::ai::ask::ids(answer.result.as_ref().unwrap()),
        std::slice::from_ref(&saved.id)
    );

    // Extract: a document stating the canary, the model copying it into a field (prompt
    // version 1, where the model writes values out).
    cara.workspace().session("ava").unwrap().activate_prompt("extract", 1).unwrap();
    let text = format!("Invoice INV-2026-99001\nPO number: {CANARY_VALUE}\nTotal: 120.00 USD\n");
    let document =
        countersign_kernel::ingest::ingest("canary.txt", text.into_bytes(), &Default::default()).unwrap();
    let extracted = fake(vec![Answer::Text(
        json!({"number": "INV-2026-99001", "po_number": CANARY_VALUE, "total": 120}).to_string(),
    )]);
    let mut extract = Extract { document, object: "invoice".into(), record: None };
    let out = rt.block_on(drive(
        &cara,
        &mut extract,
        Some(with_key(&extracted.url)),
        &Cancel::default(),
        &mut |_| {},
    ));
    let proposal = out.unwrap().proposal;
    assert_eq!(
        extracted.authorizations.lock().unwrap()[0],
        format!("Bearer {CANARY_KEY}"),
        "the key was sent"
    );
    assert!(proposal.fields.iter().any(|f| f.value == json!(CANARY_VALUE)), "the value reached the proposal");

    // Summarize of the canary account, refused: the model claims something no fact states.
    let summarized = fake(vec![Answer::Text(
        json!({"sentences": [format!("{CANARY_VALUE} owes 999 dollars.")]}).to_string(),
    )]);
    let mut summarize = Summarize::new("account", &saved.id);
    let out = rt.block_on(drive(
        &ava,
        &mut summarize,
        Some(with_key(&summarized.url)),
        &Cancel::default(),
        &mut |_| {},
    ));
    assert!(out.is_err(), "an uncited claim is refused");

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The log says what happened…
    for event in [
        "workspace file opened",
        "definition deployed",
        "record saved",
        "save refused",
        "record written",
        "file imported",
        "document read",
        "invocation began",
        "model answered",
        "invocation finished",
    ] {
        assert!(log.contains(event), "no `{event}` in the log:\n{log}");
    }
    assert!(log.contains(&saved.id), "the saved record's id is in the log");
    // …and never what the records, documents, prompts or keys hold.
    let lower = log.to_lowercase();
    for canary in [CANARY_VALUE, "zebracorn", "quillfeather", CANARY_KEY, "sk-canary"] {
        assert!(!lower.contains(&canary.to_lowercase()), "`{canary}` reached the log:\n{log}");
    }
}
