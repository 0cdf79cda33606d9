//! Proposals: a model's write is never a write. Accept (all or some fields) is the reviewer's
//! save; stale accepts and undos are conflicts; undo for 30 days; retention — with the fake
//! clock; two reviewers racing on one record.

use crate::common;

use countersign_kernel::proposals::{ProposalDraft, ProposalState, ProposedField};
use countersign_kernel::{Code, QuerySpec, SaveContext, SaveRequest, Session, Workspace};
use serde_json::{json, Value};

pub(crate) fn field(name: &str, value: Value) -> ProposedField {
    ProposedField {
        field: name.into(),
        value,
        before: Value::Null,
        confidence: Some(0.9),
        source: None,
        problem: None,
        candidates: vec![],
    }
}

pub(crate) fn draft(record: Option<&str>, fields: Vec<ProposedField>) -> ProposalDraft {
    ProposalDraft {
        capability: "extract".into(),
        object: "invoice".into(),
        record_id: record.map(String::from),
        fields,
        rationale: "from the test".into(),
        grounding_hash: "sha256:test".into(),
        prompt: "extract".into(),
        prompt_version: 1,
        model_id: "test-model".into(),
        model_version: "sha256:model".into(),
        ..Default::default()
    }
}

/// A sent invoice (no paid date) of the demo.
fn sent_invoice(s: &Session<'_>) -> String {
    let r = s
        .query(&QuerySpec::parse(r#"{"object": "invoice", "filters": {"field": "status", "op": "eq", "value": "sent"}, "limit": 1}"#).unwrap())
        .unwrap();
    r.records[0]["id"].as_str().unwrap().to_string()
}

fn value(ws: &Workspace, id: &str, f: &str) -> Value {
    ws.session("ava").unwrap().get("invoice", id).unwrap().fields.get(f).cloned().unwrap_or(Value::Null)
}

#[test]
fn nothing_is_written_until_accept_and_partial_accept_writes_only_the_chosen_fields() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let id = sent_invoice(&ava);
    let before_total = value(&f.ws, &id, "total");
    let history = common::history_rows(&f.ws);
    let p = ava
        .propose(draft(Some(&id), vec![field("po_number", json!("PO-77")), field("total", json!(1234.5))]))
        .unwrap();
    assert_eq!((p.state, p.basis_version.is_some()), (ProposalState::Open, true));
    assert_eq!(p.fields[1].before, before_total, "the basis value is kept for the review");
    assert_eq!(common::history_rows(&f.ws), history, "a proposal writes no record");
    assert_eq!(value(&f.ws, &id, "po_number"), Value::Null);

    let cara = f.ws.session("cara").unwrap();
    let (accepted, saved) = cara.accept_proposal(&p.id, Some(&["po_number".to_string()])).unwrap();
    assert_eq!(accepted.state, ProposalState::Accepted);
    assert_eq!(accepted.accepted_fields, ["po_number"]);
    assert!(accepted.undo_until.is_some());
    assert_eq!(value(&f.ws, &id, "po_number"), json!("PO-77"));
    assert_eq!(value(&f.ws, &id, "total"), before_total, "a field not chosen is not written");
    let h = cara.history_of("invoice", &id).unwrap();
    let last = h.iter().find(|e| e.correlation_id == saved.correlation_id).unwrap();
    assert_eq!((last.actor.as_str(), last.proposed_by.as_deref()), ("cara", Some(p.id.as_str())));
    // An accepted proposal cannot be accepted again.
    assert_eq!(cara.accept_proposal(&p.id, None).unwrap_err().code, Code::ProposalClosed);
}

#[test]
fn a_stale_accept_is_a_conflict_with_base_current_and_proposed() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let id = sent_invoice(&ava);
    let p = ava.propose(draft(Some(&id), vec![field("po_number", json!("PO-1"))])).unwrap();
    ava.save(
        SaveRequest::Update {
            object: "invoice".into(),
            id: id.clone(),
            changes: common::map(json!({"po_number": "PO-HUMAN"})),
            expected_version: None,
        },
        &SaveContext::default(),
    )
    .unwrap();
    let cara = f.ws.session("cara").unwrap();
    let e = cara.accept_proposal(&p.id, None).unwrap_err();
    assert_eq!(e.code, Code::Conflict);
    assert_eq!(e.details[0].path, "po_number");
    assert!(
        e.details[0].message.contains("current \"PO-HUMAN\"")
            && e.details[0].message.contains("proposed \"PO-1\""),
        "{:?}",
        e.details
    );
    assert_eq!(value(&f.ws, &id, "po_number"), json!("PO-HUMAN"), "nothing written");
    assert_eq!(cara.proposal(&p.id).unwrap().state, ProposalState::Open);
}

#[test]
fn a_validation_failure_on_accept_writes_nothing() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let id = sent_invoice(&ava);
    // Paid without a paid date breaks a rule of the invoice.
    let p = ava
        .propose(draft(Some(&id), vec![field("status", json!("paid")), field("po_number", json!("PO-9"))]))
        .unwrap();
    let history = common::history_rows(&f.ws);
    let cara = f.ws.session("cara").unwrap();
    let e = cara.accept_proposal(&p.id, None).unwrap_err();
    assert_eq!(e.code, Code::ValidationRule);
    assert_eq!(common::history_rows(&f.ws), history);
    assert_eq!(value(&f.ws, &id, "po_number"), Value::Null, "not even the valid field");
    assert_eq!(cara.proposal(&p.id).unwrap().state, ProposalState::Open);
    // Accepting only the valid field works.
    cara.accept_proposal(&p.id, Some(&["po_number".to_string()])).unwrap();
}

#[test]
fn accept_needs_ai_approve_and_edit_access() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let id = sent_invoice(&ava);
    let p = ava.propose(draft(Some(&id), vec![field("po_number", json!("PO-2"))])).unwrap();
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(ben.accept_proposal(&p.id, None).unwrap_err().code, Code::Permission);
    let dan = f.ws.session("dan").unwrap();
    assert_eq!(
        dan.propose(draft(Some(&id), vec![field("po_number", json!("x"))])).unwrap_err().code,
        Code::Permission
    );
    // A proposal for an account's name, which cara may read but not edit: the save path refuses.
    let acc = ava
        .propose(ProposalDraft {
            object: "account".into(),
            record_id: Some("acc_0001".into()),
            fields: vec![field("name", json!("Renamed"))],
            ..draft(None, vec![])
        })
        .unwrap();
    let cara = f.ws.session("cara").unwrap();
    assert_eq!(cara.accept_proposal(&acc.id, None).unwrap_err().code, Code::Permission);
}

#[test]
fn undo_restores_within_30_days_refuses_after_a_later_edit_and_says_why_after_the_window() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let cara = f.ws.session("cara").unwrap();
    let id = sent_invoice(&ava);
    let before = value(&f.ws, &id, "po_number");
    let p = ava.propose(draft(Some(&id), vec![field("po_number", json!("PO-U"))])).unwrap();
    cara.accept_proposal(&p.id, None).unwrap();
    f.clock.advance(chrono::Duration::days(29));
    let (undone, saved) = cara.undo_proposal(&p.id).unwrap();
    assert_eq!(undone.state, ProposalState::Undone);
    assert_eq!(value(&f.ws, &id, "po_number"), before);
    assert_eq!(cara.history_of("invoice", &id).unwrap().last().unwrap().correlation_id, saved.correlation_id);
    assert_eq!(cara.undo_proposal(&p.id).unwrap_err().code, Code::ProposalClosed);

    // Stale undo: the record moved after acceptance.
    let p2 = ava.propose(draft(Some(&id), vec![field("po_number", json!("PO-V"))])).unwrap();
    cara.accept_proposal(&p2.id, None).unwrap();
    ava.save(
        SaveRequest::Update {
            object: "invoice".into(),
            id: id.clone(),
            changes: common::map(json!({"po_number": "PO-LATER"})),
            expected_version: None,
        },
        &SaveContext::default(),
    )
    .unwrap();
    assert_eq!(cara.undo_proposal(&p2.id).unwrap_err().code, Code::Conflict);
    assert_eq!(value(&f.ws, &id, "po_number"), json!("PO-LATER"));

    // After the window.
    let p3 = ava.propose(draft(Some(&id), vec![field("po_number", json!("PO-W"))])).unwrap();
    cara.accept_proposal(&p3.id, None).unwrap();
    f.clock.advance(chrono::Duration::days(31));
    let e = cara.undo_proposal(&p3.id).unwrap_err();
    assert_eq!(e.code, Code::ProposalClosed);
    assert!(e.message.contains("30 days"), "{}", e.message);
}

#[test]
fn a_create_proposal_makes_the_record_on_accept_and_undo_removes_it() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let p = ava
        .propose(draft(
            None,
            vec![
                field("number", json!("INV-2026-99999")),
                field("account", json!("acc_0009")),
                field("status", json!("draft")),
                field("issue_date", json!("2026-11-01")),
                field("total", json!(100)),
            ],
        ))
        .unwrap();
    assert_eq!(p.operation, countersign_kernel::proposals::ProposalOperation::Create);
    let cara = f.ws.session("cara").unwrap();
    let (accepted, saved) = cara.accept_proposal(&p.id, None).unwrap();
    assert_eq!(accepted.record_id.as_deref(), Some(saved.id.as_str()));
    assert!(cara.get("invoice", &saved.id).is_ok());
    // Undo is the undoing user's save with the same checks: cara may create invoices but not
    // delete them.
    assert_eq!(cara.undo_proposal(&p.id).unwrap_err().code, Code::Permission);
    assert!(cara.get("invoice", &saved.id).is_ok());
    ava.undo_proposal(&p.id).unwrap();
    assert_eq!(cara.get("invoice", &saved.id).unwrap_err().code, Code::NotFound);
}

#[test]
fn retention_expires_open_and_purges_old_decided_proposals() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let cara = f.ws.session("cara").unwrap();
    let id = sent_invoice(&ava);
    let open = ava.propose(draft(Some(&id), vec![field("po_number", json!("A"))])).unwrap();
    let discarded = ava.propose(draft(Some(&id), vec![field("po_number", json!("B"))])).unwrap();
    let accepted = ava.propose(draft(Some(&id), vec![field("po_number", json!("C"))])).unwrap();
    cara.discard_proposal(&discarded.id, Some("wrong customer")).unwrap();
    cara.accept_proposal(&accepted.id, None).unwrap();
    assert_eq!(cara.proposal(&discarded.id).unwrap().state_reason.as_deref(), Some("wrong customer"));
    f.clock.advance(chrono::Duration::days(30));
    let r = cara.run_retention().unwrap();
    assert_eq!((r.expired, r.purged_discarded, r.purged_accepted), (1, 0, 0));
    let e = cara.proposal(&open.id).unwrap();
    assert_eq!(e.state, ProposalState::Expired);
    assert!(e.state_reason.unwrap().contains("30 days"));
    assert_eq!(cara.accept_proposal(&open.id, None).unwrap_err().code, Code::ProposalClosed);
    f.clock.advance(chrono::Duration::days(61));
    assert_eq!(cara.run_retention().unwrap().purged_discarded, 1);
    assert_eq!(cara.proposal(&discarded.id).unwrap_err().code, Code::NotFound);
    f.clock.advance(chrono::Duration::days(400));
    assert_eq!(cara.run_retention().unwrap().purged_accepted, 1);
    // An open proposal past 30 days is expired even before the job runs.
    let late = ava.propose(draft(Some(&id), vec![field("po_number", json!("D"))])).unwrap();
    f.clock.advance(chrono::Duration::days(31));
    assert_eq!(cara.accept_proposal(&late.id, None).unwrap_err().code, Code::ProposalClosed);
}

#[test]
fn readers_see_only_what_they_may() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let p = ava
        .propose(ProposalDraft {
            object: "account".into(),
            record_id: Some("acc_0001".into()),
            fields: vec![field("credit_limit", json!(500000)), field("rating", json!("hot"))],
            ..draft(None, vec![])
        })
        .unwrap();
    // Ben (no ai.approve) sees none of ava's proposals.
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(ben.proposal(&p.id).unwrap_err().code, Code::NotFound);
    assert!(ben.proposals(None, None).unwrap().is_empty());
    let cara = f.ws.session("cara").unwrap();
    assert_eq!(cara.proposals(Some(ProposalState::Open), Some("account")).unwrap().len(), 1);
}

#[test]
fn two_reviewers_racing_on_one_record_exactly_one_wins_and_no_update_is_lost() {
    let f = common::demo();
    let path = f.ws.path().to_path_buf();
    let ava = f.ws.session("ava").unwrap();
    let id = sent_invoice(&ava);
    let rounds = 20;
    let mut wins = 0;
    for round in 0..rounds {
        let a = ava.propose(draft(Some(&id), vec![field("po_number", json!(format!("A-{round}")))])).unwrap();
        let b = ava.propose(draft(Some(&id), vec![field("po_number", json!(format!("B-{round}")))])).unwrap();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let results: Vec<(String, countersign_kernel::Result<()>)> = std::thread::scope(|s| {
            let handles: Vec<_> = [(a.id.clone(), "cara"), (b.id.clone(), "ava")]
                .into_iter()
                .map(|(pid, user)| {
                    let (path, barrier) = (path.clone(), barrier.clone());
                    s.spawn(move || {
                        let ws = Workspace::open(&path, Default::default()).unwrap();
                        let session = ws.session(user).unwrap();
                        barrier.wait();
                        let r = loop {
                            match session.accept_proposal(&pid, None) {
                                Err(e) if e.retriable => continue, // busy: the other writer holds the file
                                other => break other.map(|_| ()),
                            }
                        };
                        (pid, r)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let ok: Vec<&String> = results.iter().filter(|(_, r)| r.is_ok()).map(|(p, _)| p).collect();
        assert_eq!(ok.len(), 1, "round {round}: {results:?}");
        for (_, r) in &results {
            if let Err(e) = r {
                assert_eq!(e.code, Code::Conflict, "round {round}: {e}");
            }
        }
        let winner = if ok[0] == &a.id { format!("A-{round}") } else { format!("B-{round}") };
        assert_eq!(
            value(&f.ws, &id, "po_number"),
            json!(winner),
            "round {round}: the winner's value is the record's"
        );
        wins += 1;
    }
    assert_eq!(wins, rounds);
}

#[test]
fn auto_apply_needs_an_allowlist_set_by_a_reviewer_and_stays_undoable() {
    let f = common::demo();
    let (ava, ben, cara) =
        (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap(), f.ws.session("cara").unwrap());
    let id = sent_invoice(&ava);
    // The capability's autonomy, from its binding (as Extract passes it).
    let autonomy = |s: &Session| s.capability("extract").unwrap().autonomy;
    // Nothing is applied without review while the capability's autonomy is `propose`.
    cara.set_auto_apply("extract", "invoice", &["po_number".into()]).unwrap();
    let early = cara.propose(draft(Some(&id), vec![field("po_number", json!("PO-0"))])).unwrap();
    assert_eq!(cara.auto_apply(&early, autonomy(&cara)).unwrap(), None);
    cara.discard_proposal(&early.id, None).unwrap();
    let mut binding = ava.capability("extract").unwrap();
    binding.autonomy = countersign_kernel::ai::pipeline::Autonomy::AutoApply;
    ava.bind_capability(&binding).unwrap();
    // Only a user with ai.approve sets the allowlist, and only for fields they can edit.
    assert_eq!(
        ben.set_auto_apply("extract", "invoice", &["po_number".into()]).unwrap_err().code,
        Code::Permission
    );
    assert_eq!(
        cara.set_auto_apply("extract", "invoice", &["nonexistent".into()]).unwrap_err().code,
        Code::UnknownField
    );
    assert_eq!(cara.set_auto_apply("extract", "invoice", &["po_number".into()]).unwrap(), ["po_number"]);

    // A field off the list keeps the whole proposal open for review.
    let mixed = cara
        .propose(draft(Some(&id), vec![field("po_number", json!("PO-1")), field("total", json!(99.0))]))
        .unwrap();
    assert_eq!(cara.auto_apply(&mixed, autonomy(&cara)).unwrap(), None);
    assert_eq!(cara.proposal(&mixed.id).unwrap().state, ProposalState::Open);
    cara.discard_proposal(&mixed.id, None).unwrap();
    // A create is never applied without review.
    let create = cara.propose(draft(None, vec![field("po_number", json!("PO-2"))])).unwrap();
    assert_eq!(cara.auto_apply(&create, autonomy(&cara)).unwrap(), None);

    // Every field on the list: applied as the user's save, audited with the proposal.
    let p = cara.propose(draft(Some(&id), vec![field("po_number", json!("PO-3"))])).unwrap();
    let applied = cara.auto_apply(&p, autonomy(&cara)).unwrap().expect("applied");
    // Applied once only: a second attempt finds it decided.
    assert_eq!(cara.auto_apply(&p, autonomy(&cara)).unwrap(), None);
    assert_eq!((applied.state, applied.auto_applied), (ProposalState::Accepted, true));
    assert_eq!(value(&f.ws, &id, "po_number"), json!("PO-3"));
    let h = cara.history_of("invoice", &id).unwrap();
    let entry = h.iter().find(|e| e.field == "po_number" && e.proposed_by.is_some()).unwrap();
    assert_eq!(entry.proposed_by.as_deref(), Some(p.id.as_str()));
    // …and undone like any other accepted proposal.
    cara.undo_proposal(&p.id).unwrap();
    assert_eq!(value(&f.ws, &id, "po_number"), Value::Null);

    // A record that moved since the basis is not applied: the proposal waits for a reviewer.
    let late = cara.propose(draft(Some(&id), vec![field("po_number", json!("PO-4"))])).unwrap();
    let v = ava.get("invoice", &id).unwrap().version;
    ava.save(
        SaveRequest::Update {
            object: "invoice".into(),
            id: id.clone(),
            changes: common::map(json!({"notes": "moved"})),
            expected_version: Some(v),
        },
        &SaveContext::default(),
    )
    .unwrap();
    assert_eq!(cara.auto_apply(&late, autonomy(&cara)).unwrap(), None);
    assert_eq!(cara.proposal(&late.id).unwrap().state, ProposalState::Open);
    // Clearing the list stops it.
    assert!(cara.set_auto_apply("extract", "invoice", &[]).unwrap().is_empty());
}

#[test]
fn the_review_puts_uncertain_fields_first_diffs_words_and_shows_base_current_proposed() {
    let f = common::demo();
    let (ava, cara) = (f.ws.session("ava").unwrap(), f.ws.session("cara").unwrap());
    let id = sent_invoice(&ava);
    let v = ava.get("invoice", &id).unwrap().version;
    ava.save(
        SaveRequest::Update {
            object: "invoice".into(),
            id: id.clone(),
            changes: common::map(json!({"po_number": "PO 100 north"})),
            expected_version: Some(v),
        },
        &SaveContext::default(),
    )
    .unwrap();
    let mut sure = field("po_number", json!("PO 200 north"));
    sure.confidence = Some(0.95);
    let mut unsure = field("total", json!(10.0));
    unsure.confidence = Some(0.4);
    let mut broken = field("due_date", json!("2026-01-01"));
    broken.problem = Some("a rule failed".into());
    let p = cara.propose(draft(Some(&id), vec![sure, unsure, broken])).unwrap();
    let r = cara.review_proposal(&p.id).unwrap();
    let order: Vec<&str> = r.fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(order, ["due_date", "total", "po_number"]);
    let po = &r.fields[2];
    let parts: Vec<(&str, &str)> = po.diff.iter().map(|d| (d.op.as_str(), d.text.as_str())).collect();
    assert_eq!(parts, [("equal", "PO "), ("delete", "100"), ("insert", "200"), ("equal", " north")]);
    assert!(!r.stale && r.can_decide && po.current.is_none());

    // The record moves: base / current / proposed for every field.
    let v = ava.get("invoice", &id).unwrap().version;
    ava.save(
        SaveRequest::Update {
            object: "invoice".into(),
            id: id.clone(),
            changes: common::map(json!({"po_number": "PO 300"})),
            expected_version: Some(v),
        },
        &SaveContext::default(),
    )
    .unwrap();
    let r = cara.review_proposal(&p.id).unwrap();
    assert!(r.stale);
    let po = r.fields.iter().find(|f| f.field == "po_number").unwrap();
    assert_eq!(
        (&po.before, po.current.as_ref(), &po.value),
        (&json!("PO 100 north"), Some(&json!("PO 300")), &json!("PO 200 north"))
    );

    // Undo gone after 30 days, and the review says why.
    let q = cara.propose(draft(Some(&id), vec![field("notes", json!("later"))])).unwrap();
    cara.accept_proposal(&q.id, None).unwrap();
    assert_eq!(cara.review_proposal(&q.id).unwrap().undo_blocked, None);
    f.clock.advance(chrono::Duration::days(31));
    let why = cara.review_proposal(&q.id).unwrap().undo_blocked.unwrap();
    assert!(why.contains("30 days"), "{why}");
}

#[test]
fn a_reviewer_fills_in_what_the_document_does_not_state_and_the_edit_is_kept_apart() {
    let f = common::demo();
    let (ava, cara) = (f.ws.session("ava").unwrap(), f.ws.session("cara").unwrap());
    // A new invoice without its number (required, no default).
    let p = ava
        .propose(draft(
            None,
            vec![
                field("account", json!("acc_0009")),
                field("status", json!("draft")),
                field("issue_date", json!("2026-11-01")),
                field("total", json!(100)),
            ],
        ))
        .unwrap();
    let r = cara.review_proposal(&p.id).unwrap();
    let missing: Vec<&str> = r.missing_required.iter().map(|m| m.field.as_str()).collect();
    assert_eq!(missing, ["number"]);
    let history = common::history_rows(&f.ws);
    assert_eq!(cara.accept_proposal(&p.id, None).unwrap_err().code, Code::Required);
    assert_eq!(common::history_rows(&f.ws), history, "a refused accept writes nothing");

    // The reviewer types the number and corrects the total.
    let edits = common::map(json!({"number": "INV-2026-88888", "total": 120}));
    let (accepted, saved) = cara.accept_proposal_edited(&p.id, None, &edits, None).unwrap();
    let rec = cara.get("invoice", &saved.id).unwrap();
    assert_eq!(
        (&rec.fields["number"], rec.fields["total"].as_f64()),
        (&json!("INV-2026-88888"), Some(120.0))
    );
    assert_eq!(accepted.reviewer_edits, edits);
    assert!(!accepted.accepted_fields.contains(&"total".to_string()), "the edited field is the reviewer's");
    assert!(accepted.accepted_fields.contains(&"account".to_string()));
    // An edit may only correct a chosen field or fill in a missing required one.
    let r = ava
        .propose(draft(None, vec![field("number", json!("INV-2026-77777")), field("total", json!(5))]))
        .unwrap();
    let err = cara
        .accept_proposal_edited(&r.id, Some(&["number".to_string()]), &common::map(json!({"total": 9})), None)
        .unwrap_err();
    assert_eq!((err.code, err.field.as_deref()), (Code::InvalidValue, Some("total")));
    // An edit of a field the reviewer cannot edit (cara reads account names only) is refused
    // like any save, and nothing is written.
    let q = ava
        .propose(ProposalDraft {
            object: "account".into(),
            record_id: Some("acc_0009".into()),
            ..draft(None, vec![field("name", json!("Monarch Holdings Group"))])
        })
        .unwrap();
    let history = common::history_rows(&f.ws);
    assert_eq!(
        cara.accept_proposal_edited(&q.id, None, &common::map(json!({"name": "Renamed"})), None)
            .unwrap_err()
            .code,
        Code::Permission
    );
    assert_eq!(common::history_rows(&f.ws), history);
    assert_eq!(cara.proposal(&q.id).unwrap().state, ProposalState::Open);
}

#[test]
fn a_reviewer_who_cannot_read_a_field_sees_neither_its_value_nor_the_document_that_states_it() {
    let f = common::demo();
    let (ava, cara) = (f.ws.session("ava").unwrap(), f.ws.session("cara").unwrap());
    let doc = countersign_kernel::proposals::SourceDocument {
        name: "note.txt".into(),
        kind: countersign_kernel::ingest::DocumentKind::Text,
        sha256: "sha256:x".into(),
        text: "Born 1980-02-03, title Buyer".into(),
        segments: vec![],
        injections: vec![],
    };
    let p = ava
        .propose(ProposalDraft {
            object: "contact".into(),
            record_id: Some("con_0001".into()),
            unmapped: vec![json!({"field": "birthdate", "value": "1980-02-03", "reason": "test"})],
            document: Some(doc),
            ..draft(None, vec![field("birthdate", json!("1980-02-03")), field("title", json!("Buyer"))])
        })
        .unwrap();
    // Cara (ai.approve) may not read birthdates.
    let r = cara.review_proposal(&p.id).unwrap();
    assert_eq!(r.proposal.hidden_fields, 1);
    assert!(r.fields.iter().all(|f| f.field != "birthdate"));
    assert!(r.proposal.unmapped.is_empty());
    assert!(r.document.is_none(), "the document states the hidden value");
    assert!(ava.review_proposal(&p.id).unwrap().document.is_some());
    // A conflict names only what she may read.
    let v = ava.get("contact", "con_0001").unwrap().version;
    ava.save(
        SaveRequest::Update {
            object: "contact".into(),
            id: "con_0001".into(),
            changes: common::map(json!({"title": "Head of Buying"})),
            expected_version: Some(v),
        },
        &SaveContext::default(),
    )
    .unwrap();
    let e = cara.accept_proposal(&p.id, Some(&["title".to_string()])).unwrap_err();
    assert_eq!(e.code, Code::Conflict);
    assert!(e.details.iter().all(|d| d.path != "birthdate"), "{:?}", e.details);
}

#[test]
fn a_damaged_stored_proposal_is_an_error_not_an_open_proposal_with_no_fields() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let id = sent_invoice(&ava);
    let p = ava.propose(draft(Some(&id), vec![field("po_number", json!("PO-5"))])).unwrap();
    let conn = f.ws.raw_connection();
    // (The state column has a CHECK constraint; the JSON columns have none.)
    for (column, damage) in [("fields", "'not json'"), ("unmapped", "'{'"), ("reviewer_edits", "'[1'")] {
        let keep: String = conn
            .query_row(&format!("SELECT {column} FROM proposal WHERE id = ?1"), [&p.id], |r| r.get(0))
            .unwrap();
        conn.execute(&format!("UPDATE proposal SET {column} = {damage} WHERE id = ?1"), [&p.id]).unwrap();
        let e = ava.proposal(&p.id).unwrap_err();
        assert_eq!(e.code, Code::Storage, "{column}: {e}");
        assert!(e.message.contains(column), "{column}: {e}");
        assert!(ava.proposals(None, None).is_err(), "{column}: the list does not hide it either");
        conn.execute(&format!("UPDATE proposal SET {column} = ?2 WHERE id = ?1"), [&p.id, &keep]).unwrap();
    }
    assert_eq!(ava.proposal(&p.id).unwrap().state, ProposalState::Open);
}

#[test]
fn opening_a_workspace_runs_retention_for_every_caller() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let id = sent_invoice(&ava);
    let open = ava.propose(draft(Some(&id), vec![field("po_number", json!("A"))])).unwrap();
    drop(ava);
    let path = f.ws.path().to_path_buf();
    f.clock.advance(chrono::Duration::days(31));
    // Another caller opens the file, on the same clock: the open expires the proposal itself.
    let opts = countersign_kernel::WorkspaceOptions {
        clock: f.clock.clone(),
        ids: std::sync::Arc::new(countersign_kernel::SequentialIds::after(1000)),
    };
    let reopened = countersign_kernel::open::open(&path, opts).unwrap();
    let stored: String = reopened
        .raw_connection()
        .query_row("SELECT state FROM proposal WHERE id = ?1", [&open.id], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, "expired");
}

#[test]
fn the_review_shows_amounts_in_the_records_currency_before_and_after() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    // inv_0001 is in EUR: an amount change stays in EUR; a currency change moves "after" only.
    let total = ava.propose(draft(Some("inv_0001"), vec![field("total", json!(17000))])).unwrap();
    let r = ava.review_proposal(&total.id).unwrap();
    assert_eq!((r.currency_before.as_deref(), r.currency_after.as_deref()), (Some("EUR"), Some("EUR")));
    let mut moved = field("currency_code", json!("GBP"));
    moved.before = json!("EUR");
    let both = ava.propose(draft(Some("inv_0001"), vec![field("total", json!(15000)), moved])).unwrap();
    let r = ava.review_proposal(&both.id).unwrap();
    assert_eq!((r.currency_before.as_deref(), r.currency_after.as_deref()), (Some("EUR"), Some("GBP")));
    // A new invoice line: its amounts are in the currency of the invoice it names.
    let mut line = draft(None, vec![field("invoice", json!("inv_0001")), field("amount", json!(10))]);
    line.object = "invoice_line".into();
    let r = ava.review_proposal(&ava.propose(line).unwrap().id).unwrap();
    assert_eq!((r.currency_before, r.currency_after.as_deref()), (None, Some("EUR")));
}
