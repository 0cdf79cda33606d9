//! Tools from outside as metadata: a definition that breaks the tool contract is refused with
//! each problem's pointer (an open input schema, a widening override, a `changes_outside` tool
//! allowed without the explicit tick, …); the admin's overrides narrow the schema the model
//! gets; saving is versioned and needs `ai.manage`; nothing from outside runs by default.

use crate::common::*;
use countersign_kernel::ai::tools::definition::{Policy, ToolDef};
use countersign_kernel::Code;
use serde_json::{json, Value};

fn refund() -> Value {
    json!({
        "name": "refund_invoice",
        "description": "Refund part of an invoice in the billing system.",
        "effect": "changes_outside",
        "implementation": {
            "kind": "http",
            "method": "POST",
            "url": "http://127.0.0.1:9/refunds/{invoice}",
            "body": {"amount": "{amount}", "reason": "{reason}"},
            "credential": "secret://countersign/billing",
            "deduplicates": true
        },
        "inputSchema": {
            "type": "object",
            "properties": {
                "invoice": {"type": "string", "maxLength": 40},
                "amount": {"type": "number"},
                "reason": {"type": "string", "enum": ["damaged", "late", "duplicate"]},
                "note": {"type": "string", "maxLength": 500},
                "contact": {"type": "object", "properties": {"email": {"type": "string"}}, "additionalProperties": false}
            },
            "required": ["invoice", "amount"],
            "additionalProperties": false
        }
    })
}

fn def(v: Value) -> ToolDef {
    serde_json::from_value(v).unwrap()
}

fn with(mut v: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    v.pointer_mut(parent).unwrap().as_object_mut().unwrap().insert(key.to_string(), value);
    v
}

#[test]
fn a_definition_that_breaks_the_tool_contract_is_refused_with_each_problem() {
    assert_eq!(def(refund()).check().map(|_| ()), Ok(()));
    assert_eq!(def(refund()).policy, Policy::Block, "nothing from outside runs by default");
    let cases = [
        (
            with(refund(), "/inputSchema/properties/contact/additionalProperties", json!(true)),
            "/inputSchema/properties/contact/additionalProperties",
        ),
        (
            with(refund(), "/inputSchema/properties/_rationale", json!({"type": "string"})),
            "/inputSchema/properties/_rationale",
        ),
        (with(refund(), "/effect", json!("reads_workspace")), "/effect"),
        (with(refund(), "/policy", json!("allow")), "/policy"),
        (with(refund(), "/name", json!("read_record")), "/name"),
        (
            with(refund(), "/implementation/url", json!("http://example.com/refunds/{invoice}")),
            "/implementation/url",
        ),
        (
            with(refund(), "/implementation/url", json!("https://billing.example/refunds/{order}")),
            "/implementation/url",
        ),
        (
            with(
                with(refund(), "/implementation/method", json!("GET")),
                "/implementation/body",
                json!({"x": "{amount}"}),
            ),
            "/implementation/body",
        ),
        (with(refund(), "/implementation/body", json!({"amount": "{total}"})), "/implementation/body/amount"),
        (
            with(refund(), "/implementation/headers", json!({"Authorization": "Bearer x"})),
            "/implementation/headers/Authorization",
        ),
        (with(refund(), "/implementation/credential", json!("hunter2")), "/implementation/credential"),
        (with(refund(), "/approvalTimeoutMinutes", json!(20000)), "/approvalTimeoutMinutes"),
        (with(refund(), "/inputOverrides", json!({"note": {"maxLength": 1000}})), "/inputOverrides/note"),
        (
            with(refund(), "/inputOverrides", json!({"invoice": {"required": false}})),
            "/inputOverrides/invoice",
        ),
        (
            with(refund(), "/inputOverrides", json!({"reason": {"allowedValues": ["damaged", "goodwill"]}})),
            "/inputOverrides/reason",
        ),
        (with(refund(), "/inputOverrides", json!({"amount": {"maxLength": 5}})), "/inputOverrides/amount"),
        (
            with(refund(), "/inputOverrides", json!({"currency": {"description": "ISO code"}})),
            "/inputOverrides/currency",
        ),
        (
            with(refund(), "/inputOverrides", json!({"contact.phone": {"required": true}})),
            "/inputOverrides/contact.phone",
        ),
    ];
    for (v, path) in cases {
        let e = def(v.clone()).check().unwrap_err();
        assert_eq!(e.code, Code::InvalidTool, "{v}");
        assert!(e.details.iter().any(|d| d.path == path), "{path}: {:?}", e.details);
    }
    // Allowed without approval only with the explicit tick.
    let ticked = with(with(refund(), "/policy", json!("allow")), "/allowChangesOutside", json!(true));
    assert!(def(ticked).check().is_ok());
    // An unknown key of the definition itself is refused as it is read.
    assert!(serde_json::from_value::<ToolDef>(with(refund(), "/retries", json!(3))).is_err());
}

#[test]
fn overrides_narrow_the_inputs_the_model_gets() {
    let narrowed = def(with(
        refund(),
        "/inputOverrides",
        json!({
            "note": {"description": "One line for the customer.", "required": true, "maxLength": 120},
            "reason": {"allowedValues": ["damaged", "late"]},
            "invoice": {"allowedValues": ["INV-2025-00001", "INV-2025-00002"]},
            "contact.email": {"maxLength": 80}
        }),
    ));
    narrowed.check().unwrap();
    let s = narrowed.effective_schema().unwrap();
    assert_eq!(s["properties"]["note"]["description"], "One line for the customer.");
    assert_eq!(s["properties"]["note"]["maxLength"], 120);
    assert_eq!(s["required"], json!(["invoice", "amount", "note"]));
    assert_eq!(s["properties"]["reason"]["enum"], json!(["damaged", "late"]));
    assert_eq!(s["properties"]["invoice"]["enum"], json!(["INV-2025-00001", "INV-2025-00002"]));
    assert_eq!(s["properties"]["contact"]["properties"]["email"]["maxLength"], 80);
    // The definition as written is unchanged: overrides are applied, not merged into it.
    assert!(narrowed.input_schema["properties"]["note"].get("description").is_none());
}

#[test]
fn saving_a_tool_is_versioned_needs_ai_manage_and_the_registry_lists_it_beside_the_kernels() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(ben.save_tool(&def(refund())).unwrap_err().code, Code::Permission);
    let ava = f.ws.session("ava").unwrap();
    let names = |s: &countersign_kernel::Session<'_>| {
        s.tools().unwrap().iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(names(&ava), vec!["read_record", "list_related", "search_corpus"]);
    let first = ava.save_tool(&def(refund())).unwrap();
    assert_eq!((first.kind.as_str(), first.version), ("http", Some(1)));
    let second = ava
        .save_tool(&def(with(refund(), "/inputOverrides", json!({"reason": {"allowedValues": ["late"]}}))))
        .unwrap();
    assert_eq!(second.version, Some(2));
    assert_eq!(
        second.input_schema["properties"]["reason"]["enum"],
        json!(["late"]),
        "the model gets the narrowed inputs"
    );
    assert_eq!(names(&ben), vec!["read_record", "list_related", "search_corpus", "refund_invoice"]);
    assert_eq!(ben.tool("refund_invoice").unwrap().version, Some(2));
    assert_eq!(ava.tool_versions("refund_invoice").unwrap().len(), 2);
    // A refused save changes nothing.
    let bad = with(refund(), "/inputSchema/additionalProperties", json!(true));
    assert_eq!(ava.save_tool(&def(bad)).unwrap_err().code, Code::InvalidTool);
    assert_eq!(ava.tool_versions("refund_invoice").unwrap().len(), 2);
    // Removed: no longer offered, its versions kept; saved again, it is the next version.
    assert_eq!(ben.remove_tool("refund_invoice").unwrap_err().code, Code::Permission);
    ava.remove_tool("refund_invoice").unwrap();
    assert_eq!(ava.tool("refund_invoice").unwrap_err().code, Code::NotFound);
    assert_eq!(ava.save_tool(&def(refund())).unwrap().version, Some(3));
    // The policy, as a new version: allowing a change outside needs the explicit tick.
    let e = ava.set_tool_policy("refund_invoice", Policy::Allow, false).unwrap_err();
    assert_eq!(e.code, Code::InvalidTool);
    let allowed = ava.set_tool_policy("refund_invoice", Policy::Allow, true).unwrap();
    assert_eq!((allowed.policy, allowed.version), (Policy::Allow, Some(4)));
    assert_eq!(
        ben.set_tool_policy("refund_invoice", Policy::Block, false).unwrap_err().code,
        Code::Permission
    );
    assert_eq!(ava.set_tool_policy("read_record", Policy::Block, false).unwrap_err().code, Code::InvalidTool);
    // Dan (a viewer, no AI) does not list tools.
    assert_eq!(f.ws.session("dan").unwrap().tools().unwrap_err().code, Code::Permission);
}
