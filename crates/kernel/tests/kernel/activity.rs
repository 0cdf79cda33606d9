//! Activity: trace entries made through the real pipeline against the fake endpoint, listed
//! with filters (capability, user, outcome, days) as each reader may see them, and expired
//! after the retention window with their spend rolled up, so the spend by day loses nothing.

use crate::ask::{ask_with, plan};
use crate::common;

use common::fake_model::{fake, model};
use countersign_kernel::ai::pipeline::{SpendRow, TraceFilter};
use countersign_kernel::Code;
use serde_json::json;

fn totals(rows: &[SpendRow]) -> (u32, u64, f64) {
    rows.iter().fold((0, 0, 0.0), |(n, t, c), r| (n + r.invocations, t + r.prompt_tokens, c + r.cost))
}

#[test]
fn traces_filter_by_capability_user_outcome_and_day_and_expire_into_spend_rollups() {
    let f = common::demo_ask_v3();
    let fk = fake(vec![plan(json!({"object": "account", "filters": []}))]);
    // Three days of Ask: ava twice a day, ben once; dan is refused (no ai.use).
    for _ in 0..3 {
        for user in ["ava", "ava", "ben", "dan"] {
            let s = f.ws.session(user).unwrap();
            let _ = ask_with(&s, "List the accounts", model(&fk.url, 1.0));
        }
        f.clock.advance(chrono::Duration::days(1));
    }
    let ava = f.ws.session("ava").unwrap();
    let all = ava.traces_where(&TraceFilter::default()).unwrap();
    assert_eq!(all.len(), 12, "ava (ai.manage) reads everyone's");
    let bens = ava.traces_where(&TraceFilter { actor: Some("ben".into()), ..Default::default() }).unwrap();
    assert_eq!(bens.len(), 3);
    let refused =
        ava.traces_where(&TraceFilter { outcome: Some("refused".into()), ..Default::default() }).unwrap();
    assert!(refused.iter().all(|t| t.actor == "dan") && refused.len() == 3);
    let first_day = &all.last().unwrap().started_at[..10];
    let day = ava
        .traces_where(&TraceFilter {
            since: Some(first_day.into()),
            until: Some(first_day.into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(day.len(), 4);
    assert!(ava
        .traces_where(&TraceFilter { capability: Some("extract".into()), ..Default::default() })
        .unwrap()
        .is_empty());
    // Ben reads only his own, whatever he filters on.
    let ben = f.ws.session("ben").unwrap();
    assert!(ben.traces_where(&TraceFilter::default()).unwrap().iter().all(|t| t.actor == "ben"));
    assert!(ben
        .traces_where(&TraceFilter { actor: Some("ava".into()), ..Default::default() })
        .unwrap()
        .is_empty());

    // The retention window: only ai.manage sets it; entries older than it go, their spend stays.
    let before = ava.spend("2000-01-01").unwrap();
    assert_eq!(ben.set_trace_days(1).unwrap_err().code, Code::Permission);
    ava.set_trace_days(2).unwrap();
    assert_eq!(ava.trace_days().unwrap(), 2);
    let removed = ava.expire_traces().unwrap();
    assert_eq!(removed, 4, "the first day's entries are past two days");
    assert_eq!(ava.traces_where(&TraceFilter::default()).unwrap().len(), 8);
    let after = ava.spend("2000-01-01").unwrap();
    assert_eq!(totals(&after), totals(&before));
    assert_eq!(after, before, "the same rows by day, capability and user");
    // Expiring again moves nothing twice.
    assert_eq!(ava.expire_traces().unwrap(), 0);
    assert_eq!(ava.spend("2000-01-01").unwrap(), before);
    // Ben's spend is his own, rollups included.
    assert!(ben.spend("2000-01-01").unwrap().iter().all(|r| r.actor == "ben"));
}

/// A month of everyday use through the real pipeline against the fake endpoint: Ask, Summarize
/// and Extract by four users, with the refusals (no `ai.use`, an answer that breaks the
/// contract twice) and failures (the endpoint down) a month brings. The spend by day adds up
/// call by call. With `COUNTERSIGN_ACTIVITY_SAMPLE=path` the workspace is also written there:
/// the end-to-end suite opens it to show the activity screen on a few hundred calls.
#[test]
fn a_month_of_calls_adds_up_day_by_day_in_the_spend() {
    use common::fake_model::Answer;
    use countersign_kernel::ai::extract::Extract;
    use countersign_kernel::ai::pipeline::drive::drive;
    use countersign_kernel::ai::provider::Cancel;
    use countersign_kernel::ai::summarize::Summarize;
    use countersign_kernel::ingest::ingest;
    use countersign_kernel::Clock;
    use std::collections::BTreeMap;

    const INVOICE: &str = "INVOICE INV-2026-77002\n\nBill to: Monarch Holdings\n\nInvoice date: 06.10.2026\nPayment due: 05.11.2026\n\nTotal due: 7,900.00 EUR\n";
    const DAYS: i64 = 30;
    const PRICE: f64 = 2.0; // USD per million tokens, in and out: every call costs 1,040 tokens' worth.
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // A per-user daily budget on Ask, so the chart has a line to be measured against.
    let mut ask = ava.capability("ask").unwrap();
    ask.settings.budget.per_user_per_day = Some(0.02);
    ava.bind_capability(&ask).unwrap();
    ava.activate_prompt("summarize", 2).unwrap();
    let (facts, _) = ava.summary_facts("account", "acc_0009").unwrap();
    let cite = |field: &str| {
        facts.iter().find(|x| x.field == field && x.id == "acc_0009").unwrap().reference.clone()
    };
    let summary = json!({"sentences": [
        format!("Monarch Holdings [{}] has an annual revenue of 40,650,000 [{}].", cite("name"), cite("annual_revenue")),
        format!("Its rating is Cold [{}].", cite("rating")),
    ]});
    let asks = fake(vec![plan(json!({"object": "account", "filters": []}))]);
    let summaries = fake(vec![Answer::Text(summary.to_string())]);
    let extracts = fake(vec![Answer::Text(
        json!({"number": "I1", "account": "N1", "issue_date": "D1", "due_date": "D2", "paid_date": null,
            "total": "A1", "currency_code": "EUR", "po_number": null})
        .to_string(),
    )]);
    let broken = fake(vec![Answer::Text("{\"object\": \"spaceship\"}".into())]);
    let down = fake(vec![Answer::Status(503)]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();

    // What each call is expected to end as; the trace must say the same.
    let mut expected: BTreeMap<(String, String, String), u32> = Default::default();
    let mut calls = 0;
    for day in 0..DAYS {
        let today = f.clock.now();
        let weekday = day % 7 < 5;
        // Busier on weekdays, with a ripple so no two weeks look alike.
        let n = if weekday { 8 + (day * 5 % 7) } else { 2 + day % 3 };
        for i in 0..n {
            let (user, capability, outcome) = match (i + day) % 9 {
                0 | 3 | 6 => ("ava", "ask", "ok"),
                1 | 5 => ("ben", "ask", "ok"),
                2 => ("cara", "summarize", "ok"),
                4 if weekday => ("cara", "extract", "ok"),
                7 if day % 4 == 1 => ("dan", "ask", "refused"),
                7 if day % 5 == 2 => ("eve", "ask", "refused"), // the answer breaks the contract twice
                8 if day % 6 == 3 => ("ben", "ask", "failed"),  // the endpoint is down
                _ => ("eve", "ask", "ok"),
            };
            let s = f.ws.session(user).unwrap();
            let url = match (user, capability, outcome) {
                ("eve", _, "refused") => &broken.url,
                (_, _, "failed") => &down.url,
                (_, "summarize", _) => &summaries.url,
                (_, "extract", _) => &extracts.url,
                _ => &asks.url,
            };
            let m = model(url, PRICE);
            let result = match capability {
                "ask" => ask_with(&s, "List the accounts", m).map(|_| ()),
                "summarize" => rt
                    .block_on(drive(
                        &s,
                        &mut Summarize::new("account", "acc_0009"),
                        Some(m),
                        &Cancel::default(),
                        &mut |_| {},
                    ))
                    .map(|_| ()),
                _ => {
                    let document =
                        ingest("invoice.txt", INVOICE.as_bytes().to_vec(), &Default::default()).unwrap();
                    let mut extract = Extract { document, object: "invoice".into(), record: None };
                    rt.block_on(drive(&s, &mut extract, Some(m), &Cancel::default(), &mut |_| {})).map(|_| ())
                }
            };
            match (outcome, &result) {
                ("ok", Ok(())) => {}
                ("refused", Err(e)) if matches!(e.code, Code::Permission | Code::Contract) => {}
                ("failed", Err(e)) if e.code == Code::IntegrationServer => {}
                _ => panic!("day {day} call {i} ({user} {capability}): expected {outcome}, got {result:?}"),
            }
            *expected
                .entry((today.format("%Y-%m-%d").to_string(), capability.into(), user.into()))
                .or_default() += 1;
            calls += 1;
            f.clock.advance(chrono::Duration::minutes(600 / n));
        }
        f.clock.advance(chrono::Duration::days(1) - chrono::Duration::minutes(600 / n * n));
    }
    assert!((250..400).contains(&calls), "a few hundred calls: {calls}");

    // Every call is in the spend on its day, by capability and user, and costs what its tokens do.
    let spend = ava.spend("2000-01-01").unwrap();
    let got: BTreeMap<(String, String, String), u32> = spend
        .iter()
        .map(|r| ((r.day.clone(), r.capability.clone(), r.actor.clone()), r.invocations))
        .collect();
    assert_eq!(got, expected);
    let (n, _, cost) = totals(&spend);
    assert_eq!(n, calls);
    assert!(cost > 0.0 && spend.iter().all(|r| r.currency == "USD"));
    let ask_days = spend
        .iter()
        .filter(|r| r.capability == "ask")
        .map(|r| &r.day)
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(ask_days.len() as i64, DAYS, "Ask was used every day");

    if let Some(path) = std::env::var_os("COUNTERSIGN_ACTIVITY_SAMPLE") {
        let _ = std::fs::remove_file(&path);
        let conn = rusqlite::Connection::open(f.dir.path().join("ws.countersign")).unwrap();
        conn.execute("VACUUM INTO ?1", [path.to_str().unwrap()]).unwrap();
    }
}
