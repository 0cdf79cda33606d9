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
    let f = common::demo();
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
