//! The assistant calling a tool from outside (an HTTP tool against a real target on
//! 127.0.0.1, the model a fake endpoint): a tool allowed to the assistant is offered as a
//! closed `use_tool` action and listed with the data, never in the system role; a call that
//! asks a person pauses the turn with nothing sent; approved, it reaches the target once under
//! its operation key and the turn ends with the tool's answer as it came (the model does not
//! restate it; a later step reads it as data); denied or expired, the model gets the code and
//! may say so, and the turn ends cleanly; a blocked tool is not offered.

use crate::common;
use crate::tool_calls::{refund_input, refund_tool, target, Reply};
use common::fake_model::{fake, pin, provider, Answer};
use countersign_kernel::ai::assistant::{resume_turn, take_turn, StepOutcome, Turn, TurnRequest};
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::tools::calls::{decide_and_carry_out, CallState, Decision};
use countersign_kernel::ai::tools::definition::Policy;
use countersign_kernel::{Code, Session};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn turn(s: &Session<'_>, text: &str) -> Turn {
    let request = TurnRequest { text: text.into(), ..Default::default() };
    rt().block_on(take_turn(s, request, &Cancel::default(), &mut |_| {})).unwrap()
}

fn resume(s: &Session<'_>, conversation: &str) -> countersign_kernel::Result<Turn> {
    rt().block_on(resume_turn(s, conversation, &Cancel::default(), &mut |_| {}))
}

fn uses_refund() -> Answer {
    let mut input = refund_input();
    input["_rationale"] = json!("The customer reported a broken delivery.");
    Answer::Text(json!({"action": "use_tool", "tool": "refund_invoice", "input": input}).to_string())
}

fn replies(text: &str) -> Answer {
    Answer::Text(json!({"action": "reply", "text": text}).to_string())
}

/// What the model was sent in the n-th request: (system text, the rest).
fn sent(requests: &[Value], n: usize) -> (String, String) {
    let messages = requests[n]["messages"].as_array().unwrap();
    let system =
        messages.iter().filter(|m| m["role"] == "system").map(|m| m["content"].to_string()).collect();
    let rest = messages.iter().filter(|m| m["role"] != "system").map(|m| m["content"].to_string()).collect();
    (system, rest)
}

const REFUND: &str = "Refund 120.50 of INV-2025-00007, it arrived damaged";

#[test]
fn a_call_that_asks_a_person_pauses_the_turn_and_goes_on_once_approved() {
    let f = common::demo();
    let (ava, ben, cara) =
        (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap(), f.ws.session("cara").unwrap());
    // The target applies a refund once per operation key and loses its first answer.
    let applied = Arc::new(Mutex::new(0));
    let counter = applied.clone();
    let t = target(move |s, before| {
        let key = s.headers.get("idempotency-key").cloned().unwrap_or_default();
        if before.iter().any(|b| b.headers.get("idempotency-key") == Some(&key)) {
            return Reply::Json(200, json!({"refund": "rf_1", "status": "done"}));
        }
        *counter.lock().unwrap() += 1;
        Reply::Lose
    });
    ava.save_tool(&refund_tool(&t.url, "block", true)).unwrap();
    let model = fake(vec![uses_refund(), uses_refund(), replies("The refund rf_1 is done.")]);
    provider(&ava, "fake", &model);
    pin(&ava, "fake", "fake");

    // Blocked: not offered (the schema has no use_tool; the model's try is refused twice).
    let blocked = turn(&ben, REFUND);
    assert!(
        matches!(&blocked.steps[0].outcome, StepOutcome::Failed { error, .. } if error.code == Code::Contract)
    );
    let (_, data) = sent(&model.chat_requests(), 0);
    assert!(!data.contains("refund_invoice"), "a blocked tool is not offered");

    ava.set_tool_policy("refund_invoice", Policy::Ask, false).unwrap();
    let model = fake(vec![uses_refund(), replies("The refund rf_1 is done.")]);
    provider(&ava, "fake", &model);
    let paused = turn(&ben, REFUND);
    assert_eq!(paused.steps.len(), 1, "the turn pauses on the call");
    let StepOutcome::Tool { call: Some(call), output: None, fault: None, .. } = &paused.steps[0].outcome
    else {
        panic!("{:?}", paused.steps)
    };
    assert_eq!(call.state, CallState::Waiting);
    assert_eq!(call.operation_key, format!("{}:1:refund_invoice", paused.correlation_id));
    assert!(t.seen().is_empty(), "nothing is sent before the approval");
    // The tool is offered as data, never in the system role; its schema closes the inputs.
    let requests = model.chat_requests();
    let (system, data) = sent(&requests, 0);
    assert!(data.contains("Tool refund_invoice") && !system.contains("Refund part of an invoice"));
    let schema = requests[0]["response_format"].to_string();
    assert!(schema.contains("use_tool") && schema.contains("_rationale"), "{schema}");
    assert_eq!(resume(&ben, &paused.conversation).unwrap_err().code, Code::Conflict, "still waiting");

    // Cara approves in the inbox: sent twice under one key, applied once.
    let decided = rt().block_on(decide_and_carry_out(&cara, &call.id, Decision::Approve, None)).unwrap();
    assert_eq!(decided.state, CallState::Succeeded);
    assert_eq!(*applied.lock().unwrap(), 1);
    assert_eq!(t.seen().len(), 2);

    // Ben's turn goes on: it ends with the tool's answer as the target gave it (the model is
    // not asked to restate it), and nothing is sent again.
    let resumed = resume(&ben, &paused.conversation).unwrap();
    assert_eq!(resumed.steps.len(), 1, "{:?}", resumed.steps);
    let StepOutcome::Tool { output: Some(out), .. } = &resumed.steps[0].outcome else {
        panic!("{:?}", resumed.steps)
    };
    assert_eq!(out["refund"], "rf_1");
    assert_eq!(model.chat_requests().len(), 1, "the model was not asked to restate the answer");
    assert_eq!(t.seen().len(), 2, "resuming sends nothing again");
    let stored = ben.conversation(&paused.conversation).unwrap();
    assert_eq!(stored.messages.last().unwrap().steps.len(), 1, "stored as it ended");
    assert_eq!(resume(&ben, &paused.conversation).unwrap_err().code, Code::Conflict, "nothing waits now");
    // The next message of the conversation reads the answer as data.
    let next = TurnRequest {
        conversation: Some(paused.conversation.clone()),
        text: "Thanks".into(),
        ..Default::default()
    };
    rt().block_on(take_turn(&ben, next, &Cancel::default(), &mut |_| {})).unwrap();
    let (system, data) = sent(&model.chat_requests(), 1);
    assert!(data.contains("it answered") && data.contains("rf_1") && !system.contains("rf_1"), "{data}");
}

#[test]
fn a_denied_or_expired_call_tells_the_model_and_the_turn_ends_cleanly() {
    let f = common::demo();
    let (ava, ben, cara) =
        (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap(), f.ws.session("cara").unwrap());
    let t = target(|_, _| Reply::Json(200, json!({"refund": "rf_2"})));
    ava.save_tool(&refund_tool(&t.url, "ask", true)).unwrap();
    let model = fake(vec![
        uses_refund(),
        replies("The refund was not made: it was denied."),
        uses_refund(),
        // After the expiry the model asks for the same call again: the turn does not repeat it.
        uses_refund(),
    ]);
    provider(&ava, "fake", &model);
    pin(&ava, "fake", "fake");

    let paused = turn(&ben, REFUND);
    let StepOutcome::Tool { call: Some(call), .. } = &paused.steps[0].outcome else { panic!() };
    rt().block_on(decide_and_carry_out(&cara, &call.id, Decision::Deny, Some("refunds go through finance")))
        .unwrap();
    let resumed = resume(&ben, &paused.conversation).unwrap();
    let StepOutcome::Tool { fault: Some(fault), .. } = &resumed.steps[0].outcome else { panic!() };
    assert_eq!(fault.code, "TOOL_APPROVAL_DENIED");
    assert!(fault.message.contains("refunds go through finance"));
    assert!(matches!(&resumed.steps[1].outcome, StepOutcome::Reply { .. }));
    let (_, data) = sent(&model.chat_requests(), 1);
    assert!(data.contains("TOOL_APPROVAL_DENIED"), "the model gets the code");

    let paused = turn(&ben, REFUND);
    f.clock.advance(chrono::Duration::hours(25));
    let resumed = resume(&ben, &paused.conversation).unwrap();
    let StepOutcome::Tool { fault: Some(fault), .. } = &resumed.steps[0].outcome else { panic!() };
    assert_eq!(fault.code, "TOOL_APPROVAL_EXPIRED");
    assert_eq!(resumed.steps.len(), 1, "the expired call is not asked for again: {:?}", resumed.steps);
    assert!(cara.approvals().unwrap().is_empty());
    assert!(t.seen().is_empty(), "neither call was sent");
}
