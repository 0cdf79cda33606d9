//! Crash safety of accept and undo: a child process (`countersign-cli proposals accept|undo`)
//! is SIGKILLed at a random moment; afterwards the file passes `PRAGMA integrity_check` and the
//! record is entirely before or entirely after, consistent with the proposal's state.
//! Trials: `COUNTERSIGN_CRASH_TRIALS` (default 40; the benchmark run uses 1,000).

use countersign_kernel::proposals::{ProposalDraft, ProposalState, ProposedField};
use countersign_kernel::records::demo;
use countersign_kernel::{Workspace, WorkspaceOptions};
use serde_json::{json, Map, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIELDS: [&str; 3] = ["po_number", "total", "notes"];

fn snapshot(ws: &Workspace, id: &str) -> (i64, Map<String, Value>) {
    let r = ws.session("ava").unwrap().get("invoice", id).unwrap();
    let fields =
        FIELDS.iter().map(|f| (f.to_string(), r.fields.get(*f).cloned().unwrap_or(Value::Null))).collect();
    (r.version, fields)
}

#[test]
fn sigkill_during_accept_and_undo_leaves_records_entirely_before_or_after() {
    let trials: usize =
        std::env::var("COUNTERSIGN_CRASH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.countersign");
    {
        let mut ws = Workspace::create(&path, WorkspaceOptions::default()).unwrap();
        demo::init_demo(&mut ws).unwrap();
    }
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut before, mut after) = (0, 0);
    let started = Instant::now();
    for t in 0..trials {
        let undo = t % 2 == 1;
        let id = format!("inv_{:04}", 1 + (t % 40) * 5);
        // Set up with the kernel: a proposal (accepted already, for an undo trial).
        let (pid, pre, proposed) = {
            let ws = Workspace::open(&path, WorkspaceOptions::default()).unwrap();
            let ava = ws.session("ava").unwrap();
            let pre = snapshot(&ws, &id);
            let values = [json!(format!("PO-CRASH-{t}")), json!(1000 + t), json!(format!("note {t}"))];
            let fields = FIELDS
                .iter()
                .zip(values.iter())
                .map(|(f, v)| ProposedField {
                    field: f.to_string(),
                    value: v.clone(),
                    before: Value::Null,
                    confidence: None,
                    source: None,
                    problem: None,
                    candidates: vec![],
                })
                .collect();
            let p = ava
                .propose(ProposalDraft {
                    capability: "extract".into(),
                    object: "invoice".into(),
                    record_id: Some(id.clone()),
                    fields,
                    prompt: "extract".into(),
                    prompt_version: 1,
                    ..Default::default()
                })
                .unwrap();
            if undo {
                ws.session("cara").unwrap().accept_proposal(&p.id, None).unwrap();
            }
            let proposed: Map<String, Value> =
                FIELDS.iter().zip(values).map(|(f, v)| (f.to_string(), v)).collect();
            (p.id, pre, proposed)
        };
        let verb = if undo { "undo" } else { "accept" };
        let mut child = Command::new(env!("CARGO_BIN_EXE_countersign-cli"))
            .args(["--workspace", path.to_str().unwrap(), "--as", "cara", "proposals", verb, &pid])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(next() % 30_000));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();

        let ws = Workspace::open(&path, WorkspaceOptions::default()).unwrap();
        let check: String =
            ws.raw_connection().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok", "trial {t}");
        let state = ws.session("cara").unwrap().proposal(&pid).unwrap().state;
        let (version, now) = snapshot(&ws, &id);
        let accepted_values = || proposed.clone();
        match (undo, state) {
            (false, ProposalState::Open) => {
                assert_eq!(
                    (version, &now),
                    (pre.0, &pre.1),
                    "trial {t}: killed before commit, but the record changed"
                );
                before += 1;
            }
            (false, ProposalState::Accepted) => {
                assert_eq!(
                    (version, now),
                    (pre.0 + 1, accepted_values()),
                    "trial {t}: accepted but not entirely written"
                );
                after += 1;
            }
            (true, ProposalState::Accepted) => {
                assert_eq!((version, now), (pre.0 + 1, accepted_values()), "trial {t}: undo half-applied");
                before += 1;
            }
            (true, ProposalState::Undone) => {
                assert_eq!(
                    (version, &now),
                    (pre.0 + 2, &pre.1),
                    "trial {t}: undone but not entirely restored"
                );
                after += 1;
            }
            (u, s) => panic!("trial {t}: undo={u} left the proposal {s:?}"),
        }
    }
    eprintln!(
        "crash safety: {trials} SIGKILLed accept/undo runs in {:.1} s: {before} killed before commit, {after} after; integrity ok and all-or-nothing in every one",
        started.elapsed().as_secs_f64()
    );
}
