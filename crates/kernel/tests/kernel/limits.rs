//! Size limits: a query spec or a workspace definition too large for SQLite is the user's (or
//! the admin's) typed error naming the limit and the JSON pointer, from the JSON Schema and
//! again from the kernel for specs built another way (Ask, the UI) — never a storage failure.
//! And a storage failure never shows SQL text.

use crate::common;

use common::*;
use countersign_kernel::metadata::condition::{AllOf, AnyOf, Comparison, Condition, NotOf, Op};
use countersign_kernel::metadata::limits;
use countersign_kernel::{Code, Fault, QuerySpec, WorkspaceDefinition};
use serde_json::{json, Value};

/// The error of a call that must fail (without printing a large `Ok` value).
fn refused<T>(r: countersign_kernel::Result<T>) -> countersign_kernel::Error {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn typed(spec: Value) -> QuerySpec {
    serde_json::from_value(spec).expect("the spec deserializes")
}

fn name_in(n: usize) -> Value {
    json!({"field": "name", "op": "in", "value": (0..n).map(|i| format!("r{i}")).collect::<Vec<_>>()})
}

fn name_is(i: usize) -> Value {
    json!({"field": "name", "op": "eq", "value": format!("n{i}")})
}

/// The error is a short error that names `pointer` and says `limit`.
fn assert_limit(e: &countersign_kernel::Error, code: Code, pointer: &str, limit: &str) {
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(pointer), "the message names {pointer}: {}", e.message);
    assert!(e.message.contains(limit), "the message names the limit {limit}: {}", e.message);
    assert_detail(e, pointer, limit);
}

/// One of the error's details is at `pointer` and says `limit`; nothing echoes the input.
fn assert_detail(e: &countersign_kernel::Error, pointer: &str, limit: &str) {
    assert!(
        e.details.iter().any(|d| d.path == pointer && d.message.contains(limit)),
        "a detail at {pointer} naming {limit}: {:?}",
        e.details
    );
    assert!(e.message.len() < 600, "the message does not echo the input: {} bytes", e.message.len());
    assert!(e.to_string().len() < 4_000, "nor does the whole error: {} bytes", e.to_string().len());
}

#[test]
fn an_in_list_over_the_limit_is_a_query_error_from_the_schema_and_from_the_compiler() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let spec = json!({"object": "account", "filters": name_in(40_000)});
    let e = refused(QuerySpec::from_json(&spec));
    assert_limit(&e, Code::InvalidQuery, "/filters/value", "1,000");
    assert_eq!(e.fault, Fault::User);
    // Built another way (the UI's IPC, Ask's model output), the compiler refuses it too.
    let e = refused(ava.query(&typed(spec)));
    assert_limit(&e, Code::InvalidQuery, "/filters/value", "1,000");
    // At the limit it runs.
    let spec = json!({"object": "account", "filters": name_in(limits::MAX_IN_VALUES)});
    ava.query(&QuerySpec::from_json(&spec).unwrap()).unwrap();
}

#[test]
fn any_and_all_over_the_limit_are_query_errors() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let children: Vec<Value> = (0..1_000).map(name_is).collect();
    for key in ["any", "all"] {
        let spec = json!({"object": "account", "filters": {key: children}});
        let e = refused(QuerySpec::from_json(&spec));
        assert_limit(&e, Code::InvalidQuery, &format!("/filters/{key}"), "100");
        let e = refused(ava.query(&typed(spec)));
        assert_limit(&e, Code::InvalidQuery, &format!("/filters/{key}"), "100");
    }
    // Many small lists that together exceed SQLite's variables: the total is bounded too.
    let lists: Vec<Value> = (0..50).map(|_| name_in(limits::MAX_IN_VALUES)).collect();
    let e = refused(ava.query(&typed(json!({"object": "account", "filters": {"any": lists}}))));
    assert_limit(&e, Code::InvalidQuery, "/filters", "10,000");
    // So is the number of conditions in one tree (SQLite's expression depth).
    let wide: Vec<Value> =
        (0..10).map(|_| json!({"any": (0..60).map(name_is).collect::<Vec<_>>()})).collect();
    let e = refused(ava.query(&typed(json!({"object": "account", "filters": {"all": wide}}))));
    assert_limit(&e, Code::InvalidQuery, "/filters", "500");
}

fn not_chain(depth: usize) -> String {
    let mut s = String::new();
    for _ in 0..depth {
        s.push_str("{\"not\":");
    }
    s.push_str(&name_is(0).to_string());
    for _ in 0..depth {
        s.push('}');
    }
    s
}

#[test]
fn nesting_depth_is_bounded_and_never_overflows_the_stack() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    // Within serde_json's own recursion limit (128), a chain deeper than the kernel's limit.
    let text = format!(r#"{{"object": "account", "filters": {}}}"#, not_chain(40));
    let e = refused(QuerySpec::parse(&text));
    let pointer = format!("/filters{}", "/not".repeat(limits::MAX_DEPTH));
    assert_limit(&e, Code::InvalidQuery, &pointer, "16");
    let spec: QuerySpec = serde_json::from_str(&text).unwrap();
    let e = refused(ava.query(&spec));
    assert_limit(&e, Code::InvalidQuery, &pointer, "16");
    // 100,000 deep: serde_json stops at its recursion limit; a typed error, no stack overflow.
    let text = format!(r#"{{"object": "account", "filters": {}}}"#, not_chain(100_000));
    let e = refused(QuerySpec::parse(&text));
    assert_eq!((e.code, e.fault), (Code::InvalidQuery, Fault::User), "{e}");
    assert!(e.message.contains("nested too deeply") && e.message.contains("16"), "{e}");
    assert!(e.message.len() < 600);
    assert!(serde_json::from_str::<QuerySpec>(&text).is_err(), "no path deserializes it");
    // A deep tree built in code (not from JSON) is refused before anything recurses into it.
    let mut c = Condition::Compare(Comparison {
        field: "name".into(),
        op: Op::Eq,
        value: Some(json!("x")),
        other_field: None,
    });
    for i in 0..1_000 {
        c = match i % 3 {
            0 => Condition::Not(NotOf { not: Box::new(c) }),
            1 => Condition::All(AllOf { all: vec![c] }),
            _ => Condition::Any(AnyOf { any: vec![c] }),
        };
    }
    let spec = QuerySpec {
        search: None,
        object: "account".into(),
        fields: vec![],
        filters: Some(c),
        sort: vec![],
        limit: None,
        offset: None,
        after: None,
    };
    let e = refused(ava.query(&spec));
    assert_eq!(e.code, Code::InvalidQuery);
    assert!(e.message.contains("16"), "{}", e.message);
}

#[test]
fn fields_and_sort_over_the_limit_are_refused_by_the_compiler_too() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let fields: Vec<&str> = std::iter::repeat_n("name", limits::MAX_SPEC_FIELDS + 1).collect();
    let e = refused(ava.query(&typed(json!({"object": "account", "fields": fields}))));
    assert_limit(&e, Code::InvalidQuery, "/fields", "100");
    let sort: Vec<Value> = (0..limits::MAX_SORT_KEYS + 1).map(|_| json!({"field": "name"})).collect();
    let e = refused(ava.query(&typed(json!({"object": "account", "sort": sort}))));
    assert_limit(&e, Code::InvalidQuery, "/sort", "8");
}

/// A tree at every limit at once: as deep, wide, numerous and value-heavy as allowed, with the
/// widest chains first so SQLite's expression depth adds up along one path.
fn tree_at_the_limits() -> Value {
    let levels = limits::MAX_DEPTH - 1;
    let per_level = (limits::MAX_CONDITION_NODES - 2) / levels - 1;
    assert!(per_level < limits::MAX_CHILDREN);
    // One value per comparison is kept back for the single-value ones.
    let mut values_left = limits::MAX_CONDITION_VALUES - limits::MAX_CONDITION_NODES;
    let mut node = json!({"field": "name", "op": "ne", "value": "deepest"});
    for level in 0..levels {
        let mut children = vec![node];
        for i in 0..per_level {
            let take = values_left.min(limits::MAX_IN_VALUES);
            if take > 0 && i % 2 == 0 {
                values_left -= take;
                children.push(name_in(take));
            } else {
                children.push(name_is(i));
            }
        }
        node = if level % 2 == 0 { json!({"any": children}) } else { json!({"all": children}) };
    }
    json!({"not": node})
}

#[test]
fn a_spec_at_every_limit_runs_in_sqlite() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let fields: Vec<&str> = std::iter::repeat_n("name", limits::MAX_SPEC_FIELDS).collect();
    let sort: Vec<Value> =
        ["name", "rating", "industry", "annual_revenue", "employees", "phone", "billing_city", "id"]
            .iter()
            .take(limits::MAX_SORT_KEYS)
            .map(|f| json!({"field": f, "direction": "desc"}))
            .collect();
    assert_eq!(sort.len(), limits::MAX_SORT_KEYS);
    let spec = json!({"object": "account", "fields": fields, "filters": tree_at_the_limits(), "sort": sort,
                      "limit": 10_000});
    let spec = QuerySpec::from_json(&spec).unwrap_or_else(|e| panic!("a spec within the limits: {e}"));
    ava.query(&spec).unwrap();
}

fn object_with_fields(n: usize) -> Value {
    let mut fields = vec![json!({"key": "name", "label": "Name", "type": "text"})];
    fields.extend((1..n).map(|i| json!({"key": format!("f{i}"), "label": format!("F{i}"), "type": "text"})));
    json!({"key": "wide", "label": "Wide", "pluralLabel": "Wides", "sharing": "public_read_write",
           "nameField": "name", "fields": fields})
}

fn definition(objects: Vec<Value>) -> Value {
    json!({
        "format": "countersign.workspace/v1",
        "name": "Limits",
        "objects": objects,
        "permissionSets": [{"key": "all", "label": "All", "objects": {"wide": ["read", "create", "edit", "delete"]}}],
        "users": [{"key": "ann", "name": "Ann", "permissionSets": ["all"]}]
    })
}

#[test]
fn a_definition_over_the_limits_is_an_admin_error_not_a_storage_failure() {
    let mut f = empty();
    let doc = definition(vec![object_with_fields(2_000)]);
    let e = refused(WorkspaceDefinition::from_json(&doc));
    assert_limit(&e, Code::InvalidDefinition, "/objects/0/fields", "500");
    assert_eq!(e.fault, Fault::Admin);
    // A definition built in code goes through the same checks on deploy.
    let def: WorkspaceDefinition = serde_json::from_value(doc).unwrap();
    let e = refused(f.ws.deploy(&def, &Default::default()));
    assert_limit(&e, Code::InvalidDefinition, "/objects/0/fields", "500");
    // Picklist values and rules are bounded; a rule's condition has the filters' limits.
    let mut wide = object_with_fields(3);
    wide["fields"][1] = json!({"key": "f1", "label": "F1", "type": "picklist",
        "values": (0..5_000).map(|i| json!({"value": format!("v{i}"), "label": format!("V{i}")})).collect::<Vec<_>>()});
    wide["validationRules"] = json!([{"key": "r", "message": "no", "assert": {"any": (0..1_000).map(|i| json!({"field": "f2", "op": "ne", "value": format!("x{i}")})).collect::<Vec<_>>()}}]);
    let e = refused(WorkspaceDefinition::from_json(&definition(vec![wide])));
    assert_limit(&e, Code::InvalidDefinition, "/objects/0/fields/1/values", "1,000");
    assert_detail(&e, "/objects/0/validationRules/0/assert/any", "100");
    // What JSON Schema cannot say (nesting, conditions and values per tree), the kernel does.
    let mut deep = object_with_fields(3);
    let chain: Value = serde_json::from_str(&not_chain(20)).unwrap();
    deep["validationRules"] = json!([{"key": "r", "message": "no", "assert": chain}]);
    let e = refused(WorkspaceDefinition::from_json(&definition(vec![deep])));
    let pointer = format!("/objects/0/validationRules/0/assert{}", "/not".repeat(limits::MAX_DEPTH));
    assert_limit(&e, Code::InvalidDefinition, &pointer, "16");
    // At the limit, the object deploys, saves and queries.
    let def =
        WorkspaceDefinition::from_json(&definition(vec![object_with_fields(limits::MAX_FIELDS)])).unwrap();
    f.ws.deploy(&def, &Default::default()).unwrap();
    let ann = f.ws.session("ann").unwrap();
    let r = ann.query(&QuerySpec::from_json(&json!({"object": "wide"})).unwrap()).unwrap();
    assert_eq!(r.fields.len(), limits::MAX_FIELDS);
}

#[test]
fn the_schemas_state_the_kernels_limits() {
    let q: Value = serde_json::from_str(countersign_kernel::records::query::SCHEMA_TEXT).unwrap();
    let w: Value = serde_json::from_str(countersign_kernel::metadata::definition::SCHEMA_TEXT).unwrap();
    let n = |v: &Value| v.as_u64().unwrap() as usize;
    assert_eq!(n(&q["properties"]["fields"]["maxItems"]), limits::MAX_SPEC_FIELDS);
    assert_eq!(n(&q["properties"]["sort"]["maxItems"]), limits::MAX_SORT_KEYS);
    for s in [&q, &w] {
        let c = &s["$defs"]["condition"]["oneOf"];
        assert_eq!(n(&c[0]["properties"]["all"]["maxItems"]), limits::MAX_CHILDREN);
        assert_eq!(n(&c[1]["properties"]["any"]["maxItems"]), limits::MAX_CHILDREN);
        assert_eq!(n(&s["$defs"]["comparison"]["properties"]["value"]["maxItems"]), limits::MAX_IN_VALUES);
    }
    assert_eq!(n(&w["properties"]["objects"]["maxItems"]), limits::MAX_OBJECTS);
    assert_eq!(n(&w["$defs"]["object"]["properties"]["fields"]["maxItems"]), limits::MAX_FIELDS);
    assert_eq!(n(&w["$defs"]["object"]["properties"]["validationRules"]["maxItems"]), limits::MAX_RULES);
    assert_eq!(n(&w["$defs"]["field"]["properties"]["values"]["maxItems"]), limits::MAX_PICKLIST_VALUES);
    assert_eq!(n(&w["$defs"]["layout"]["properties"]["sections"]["maxItems"]), limits::MAX_LAYOUT_SECTIONS);
    assert_eq!(n(&w["properties"]["permissionSets"]["maxItems"]), limits::MAX_PERMISSION_SETS);
    assert_eq!(n(&w["properties"]["users"]["maxItems"]), limits::MAX_USERS);
}

#[test]
fn a_storage_failure_is_a_short_platform_error_without_sql() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    f.ws.raw_connection()
        .execute_batch("DROP INDEX ix_account_rating; ALTER TABLE obj_account DROP COLUMN f_rating")
        .unwrap();
    let spec = json!({"object": "account", "fields": ["name", "rating"], "filters": name_in(3)});
    let e = refused(ava.query(&QuerySpec::from_json(&spec).unwrap()));
    assert_eq!((e.code, e.fault), (Code::Storage, Fault::Platform), "{e}");
    let shown = e.to_string();
    for sql in ["SELECT", "WHERE", "ORDER BY", "LIMIT", "offset"] {
        assert!(!shown.contains(sql), "`{sql}` in the error shown to the user: {shown}");
    }
    assert!(shown.len() < 300, "{shown}");
}
