//! What the demo's metadata offers to build cases from: objects, fields, words, and the fields
//! each user may read.

use super::*;

/// A field as specs are built from it: key, type, picklist values, lookup target.
pub(super) type FieldShape = (String, FieldType, Vec<String>, Option<String>);

/// What the demo's metadata offers to build specs from.
pub(super) struct Vocabulary {
    pub(super) objects: Vec<String>,
    /// object → (field key, type, picklist values, lookup target)
    pub(super) fields: HashMap<String, Vec<FieldShape>>,
    pub(super) words: Vec<String>,
}

impl Vocabulary {
    pub(super) fn of(def: &WorkspaceDefinition) -> Vocabulary {
        let mut fields = HashMap::new();
        let mut words = vec![];
        for o in &def.objects {
            words.push(o.label.clone());
            let fs = o
                .fields
                .iter()
                .map(|f| {
                    words.push(f.label.clone());
                    let values = f.values.iter().flatten().map(|v| v.value.clone()).collect::<Vec<_>>();
                    words.extend(values.iter().cloned());
                    (f.key.clone(), f.field_type, values, f.target.clone())
                })
                .collect();
            fields.insert(o.key.clone(), fs);
        }
        Vocabulary { objects: def.objects.iter().map(|o| o.key.clone()).collect(), fields, words }
    }

    pub(super) fn path(&self, rng: &mut Rng, object: &str) -> String {
        let Some(fs) = self.fields.get(object) else { return gen::nasty(rng) };
        match rng.below(10) {
            0 => "id".into(),
            1 => gen::nasty(rng),
            2 | 3 => {
                let lookups: Vec<_> = fs.iter().filter(|f| f.3.is_some()).collect();
                if lookups.is_empty() {
                    return rng.pick(fs).0.clone();
                }
                let l = rng.pick(&lookups);
                let target = l.3.clone().unwrap_or_default();
                let sub = self.path(rng, &target);
                format!("{}.{sub}", l.0)
            }
            _ => rng.pick(fs).0.clone(),
        }
    }

    pub(super) fn value_for(&self, rng: &mut Rng, object: &str, path: &str) -> Value {
        let field = self.fields.get(object).and_then(|fs| fs.iter().find(|f| f.0 == path));
        match (field, rng.below(4)) {
            (Some((_, FieldType::Picklist, values, _)), 0..=2) if !values.is_empty() => {
                json!(rng.pick(values))
            }
            (Some((_, FieldType::Date | FieldType::Datetime, ..)), 0..=2) => json!(gen::date(rng)),
            (Some((_, FieldType::Number | FieldType::Currency, ..)), 0..=2) => gen::number(rng),
            (Some((_, FieldType::Boolean, ..)), 0..=2) => json!(rng.chance(0.5)),
            _ => gen::any_json(rng, 1, &self.words),
        }
    }

    /// A condition tree of at most `budget` nodes (shared with the caller's siblings).
    pub(super) fn condition(&self, rng: &mut Rng, object: &str, depth: usize, budget: &mut usize) -> Value {
        *budget = budget.saturating_sub(1);
        if depth > 0 && *budget > 0 && rng.chance(0.3) {
            let n = rng.size(3, 1500).min(*budget);
            let children: Vec<Value> =
                (0..n).map(|_| self.condition(rng, object, depth - 1, budget)).collect();
            let (key, value) = match rng.below(3) {
                0 => ("all", Value::Array(children)),
                1 => ("any", Value::Array(children)),
                _ => ("not", children.into_iter().next().unwrap_or(json!({}))),
            };
            return Value::Object([(key.to_string(), value)].into_iter().collect());
        }
        if rng.chance(0.005) {
            // A chain of `not` far deeper than any person writes.
            let mut c = json!({"field": "id", "op": "is_set"});
            for _ in 0..rng.below(5000) {
                // Not `json!`, which would copy the whole chain at every step.
                c = Value::Object([("not".to_string(), c)].into_iter().collect());
            }
            return c;
        }
        let field = self.path(rng, object);
        let op = *rng.pick(&[
            "eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "contains", "is_set", "is_blank", "like",
            "",
        ]);
        let mut c = json!({ "field": field, "op": op });
        match rng.below(6) {
            0 => c["otherField"] = json!(self.path(rng, object)),
            1 => {
                let n = rng.size(5, 40_000);
                c["value"] = Value::Array(
                    (0..n)
                        .map(|i| {
                            if i < 20 {
                                self.value_for(rng, object, &field)
                            } else {
                                json!(format!("v{i}"))
                            }
                        })
                        .collect(),
                );
            }
            2 => {}
            _ => c["value"] = self.value_for(rng, object, &field),
        }
        c
    }

    pub(super) fn spec(&self, rng: &mut Rng) -> Value {
        let object = if rng.chance(0.9) { rng.pick(&self.objects).clone() } else { gen::nasty(rng) };
        let mut spec = json!({ "object": object });
        if rng.chance(0.7) {
            let n = rng.size(5, 3000);
            spec["fields"] = Value::Array((0..n).map(|_| json!(self.path(rng, &object))).collect());
        }
        if rng.chance(0.7) {
            spec["filters"] = self.condition(rng, &object, 4, &mut 3000);
        }
        if rng.chance(0.4) {
            let n = rng.size(3, 200);
            spec["sort"] = Value::Array(
                (0..n)
                    .map(|_| json!({"field": self.path(rng, &object), "direction": rng.pick(&["asc", "desc", "up"])}))
                    .collect(),
            );
        }
        for key in ["limit", "offset"] {
            if rng.chance(0.4) {
                spec[key] = rng
                    .pick(&[
                        json!(0),
                        json!(1),
                        json!(100),
                        json!(10_000),
                        json!(10_001),
                        json!(-1),
                        json!(4_294_967_296u64),
                        json!("5"),
                        json!(1.5),
                    ])
                    .clone();
            }
        }
        if rng.chance(0.1) {
            gen::mutate_json(rng, &mut spec, &self.words);
        }
        spec
    }
}

/// Field paths a user may read, per object (the first segment of a path).
pub(super) fn readable_fields(ws: &Workspace, user: &str) -> HashMap<String, BTreeSet<String>> {
    let mut out = HashMap::new();
    let Ok(session) = ws.session(user) else { return out };
    for o in &demo_definition().objects {
        if let Ok(view) = session.describe_object(&o.key) {
            let mut keys: BTreeSet<String> = view.fields.iter().map(|f| f.key.clone()).collect();
            keys.insert("id".into());
            out.insert(o.key.clone(), keys);
        }
    }
    out
}
