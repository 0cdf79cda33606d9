//! Locales: the workspace's (`locale` in its definition) and a user's own; what a reader in a
//! locale gets from Summarize (the prompt's language variant, values written as the locale
//! writes them) and from the records (picklist labels in their language).

use crate::common;

use common::fake_model::{fake, model, Answer};
use countersign_kernel::ai::pipeline::drive::drive;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::summarize::{recheck, Summarize};
use countersign_kernel::locale::Locale;
use countersign_kernel::Code;
use serde_json::json;

#[test]
fn the_workspace_locale_is_deployed_and_a_user_may_choose_their_own() {
    let f = common::demo();
    let mut ws = f.ws;
    let mut def = ws.catalog().unwrap().definition.clone();
    def.locale = Some("pt-BR".into());
    let e = ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap_err();
    assert!(e.details.iter().any(|d| d.path == "/locale"), "{:?}", e.details);
    def.locale = Some("de-DE".into());
    ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let ben = ws.session("ben").unwrap();
    assert_eq!(ben.locale().tag(), "de-DE", "the workspace's");
    ben.set_own_locale(Some("fr_fr")).unwrap();
    assert_eq!(ben.locale().tag(), "fr-FR", "his own, over the workspace's");
    assert_eq!(ws.session("ava").unwrap().locale().tag(), "de-DE", "nobody else's changed");
    let e = ben.set_own_locale(Some("klingon")).unwrap_err();
    assert_eq!(e.code, Code::InvalidValue);
    assert_eq!(ben.locale().tag(), "fr-FR", "a refused choice changes nothing");
    ben.set_own_locale(None).unwrap();
    assert_eq!(ben.locale().tag(), "de-DE");
}

#[test]
fn a_german_reader_gets_the_german_prompt_and_german_dates_and_amounts_verified() {
    let f = common::demo();
    f.ws.session("ava").unwrap().set_own_locale(Some("de-DE")).unwrap();
    // inv_0047: 71,150.00 USD, due 2 April 2026.
    let answer = json!({"sentences": [
        "Die Rechnung {number} über {total} war am {due_date} fällig.",
        "Sie ist {status}."
    ]});
    let summarize = |ws: &countersign_kernel::Workspace| {
        let ava = ws.session("ava").unwrap();
        let fake = fake(vec![Answer::Text(answer.to_string())]);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let out = rt
            .block_on(drive(
                &ava,
                &mut Summarize::new("invoice", "inv_0047"),
                Some(model(&fake.url, 0.0)),
                &Cancel::default(),
                &mut |_| {},
            ))
            .unwrap();
        assert_eq!(recheck(&ava, &out).unwrap(), 0, "the German summary holds on freshly read facts");
        (out, fake.chat_requests()[0].clone())
    };
    // The demo labels its invoice fields in German too: the German words name the values the
    // sentence states ("Rechnung…" the amount, "fällig" the due date), so the model's prose stands.
    let (out, request) = summarize(&f.ws);
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("Du fasst einen Datensatz"), "{system}");
    let sent = request.to_string();
    assert!(sent.contains("71.150,00 USD"), "the sheet's values in the reader's locale");
    assert!(sent.contains("fälligkeitsdatum"), "the sheet's labels in the reader's language: {sent}");
    let texts: Vec<(&str, bool)> = out.sentences.iter().map(|s| (s.text.as_str(), s.clause)).collect();
    assert_eq!(
        texts[0],
        ("Die Rechnung INV-2026-00047 über 71.150,00 USD war am 2. April 2026 fällig.", false)
    );
    assert_eq!(texts[1], ("Sie ist Bezahlt.", false), "a status after “ist”, in its German label");
    // Without the German labels, German words cannot say which amount and which date the
    // sentence states: the kernel writes them beside their labels, in German formats.
    let mut doc = serde_json::to_value(&f.ws.catalog().unwrap().definition).unwrap();
    for o in doc["objects"].as_array_mut().unwrap().iter_mut().filter(|o| o["key"] == "invoice") {
        for field in o["fields"].as_array_mut().unwrap() {
            field.as_object_mut().unwrap().remove("labels");
        }
    }
    let mut ws = f.ws;
    ws.deploy(&serde_json::from_value(doc).unwrap(), &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let (out, _) = summarize(&ws);
    assert_eq!(
        (out.sentences[0].text.as_str(), out.sentences[0].clause),
        ("Total: 71.150,00 USD; Due Date: 2. April 2026.", true)
    );
    // The same record for an English reader: the same values, written as English writes them.
    assert_eq!(ws.session("eve").unwrap().locale(), Locale::default());
}

#[test]
fn picklist_labels_are_shown_in_the_readers_language() {
    let f = common::demo();
    let mut doc = serde_json::to_value(&f.ws.catalog().unwrap().definition).unwrap();
    for o in doc["objects"].as_array_mut().unwrap() {
        if o["key"] != "invoice" {
            continue;
        }
        for field in o["fields"].as_array_mut().unwrap() {
            if field["key"] == "status" {
                for v in field["values"].as_array_mut().unwrap() {
                    if v["value"] == "paid" {
                        v["labels"] = json!({"de": "Bezahlt", "fr": "Payée"});
                    }
                }
            }
        }
    }
    let def = serde_json::from_value(doc).unwrap();
    let mut ws = f.ws;
    ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let label = |user: &str| {
        let s = ws.session(user).unwrap();
        let view = s.describe_object("invoice").unwrap();
        let status = view.fields.iter().find(|f| f.key == "status").unwrap();
        status.values.as_ref().unwrap().iter().find(|v| v.value == "paid").unwrap().label.clone()
    };
    assert_eq!(label("ava"), "Paid");
    ws.session("ava").unwrap().set_own_locale(Some("de")).unwrap();
    assert_eq!(label("ava"), "Bezahlt");
    ws.session("ava").unwrap().set_own_locale(Some("es")).unwrap();
    assert_eq!(label("ava"), "Paid", "no Spanish label: the label as defined");
}
