//! Prompt versions 4 and 5: the model chooses among the conditions the kernel read (`reader`). The
//! per-request schema offers, per object, the ids of the candidates that apply to it, its
//! sortable fields (only when the question asks for an order) and the counts of rows the
//! question says; the kernel composes the spec: OR within one group (values of one field),
//! AND across groups, each candidate's own condition. Question words no chosen candidate uses
//! are listed with the answer ("not used: …").

use super::reader::{
    tokens, words_naming, Candidate, Kind, Reading, Token, FILLER, LIGHT_WORDS, ORDER_WORDS, POINTING,
};
use super::*;
use crate::metadata::condition::AllOf;

/// A condition the kernel read in the question, as the answer shows it: the chosen ones and
/// the others (a chip offers a swap to another reading of the same words).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReadCondition {
    pub id: String,
    /// The question's words it comes from.
    pub words: String,
    /// What it means, in the workspace's labels.
    pub meaning: String,
    pub chosen: bool,
    /// The condition on the queried object; absent when it does not apply to that object.
    #[ts(optional)]
    pub condition: Option<Condition>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChoiceOut {
    object: String,
    #[serde(default)]
    conditions: Vec<String>,
    #[serde(default)]
    sort: Vec<SortOut>,
    #[serde(default)]
    limit: Option<u32>,
}

/// The fields a query on `object` may sort by: its own, but lookups and long texts.
fn sortable(p: &Projection, object: &str) -> Vec<String> {
    p.object(object)
        .map(|o| {
            o.fields
                .iter()
                .filter(|f| !matches!(f.field_type, FieldType::Lookup | FieldType::LongText))
                .map(|f| f.key.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the question asks for an order ("largest", "newest", "top").
fn asks_order(t: &[Token]) -> bool {
    t.iter().any(|w| ORDER_WORDS.contains(&w.lower.as_str()) && w.lower != "by")
}

/// The objects a choice may list: the reading's, among those the user may ask about.
fn focus(objects: &[String], reading: &Reading) -> Vec<String> {
    let mine: Vec<String> = reading.objects.iter().filter(|o| objects.contains(o)).cloned().collect();
    if mine.is_empty() {
        objects.to_vec()
    } else {
        mine
    }
}

/// The output contract of one request under versions 4 and 5 (`keys`: which of `sort` and
/// `limit` it writes).
pub(super) fn choice_schema(
    p: &Projection,
    objects: &[String],
    reading: &Reading,
    keys: ChoiceKeys,
    refusal: bool,
) -> Value {
    let order = asks_order(&reading.tokens);
    let mut alternatives: Vec<Value> = focus(objects, reading)
        .iter()
        .map(|key| {
            let ids: Vec<&str> =
                reading.candidates.iter().filter(|c| c.on(p, key).is_some()).map(|c| c.id.as_str()).collect();
            let conditions = if ids.is_empty() {
                json!({"const": []})
            } else {
                json!({"type": "array", "items": {"enum": ids}, "uniqueItems": true, "maxItems": 8})
            };
            let fields = if order { sortable(p, key) } else { vec![] };
            let sort = if fields.is_empty() {
                json!({"const": []})
            } else {
                json!({"type": "array", "maxItems": 2, "items": {
                    "type": "object",
                    "properties": {"field": {"enum": fields}, "direction": {"enum": ["asc", "desc"]}},
                    "required": ["field", "direction"],
                    "additionalProperties": false
                }})
            };
            let limit = if reading.counts.is_empty() {
                json!({"type": "null"})
            } else {
                json!({"anyOf": [{"enum": reading.counts}, {"type": "null"}]})
            };
            let mut properties = Map::new();
            properties.insert("object".into(), json!({"const": key}));
            properties.insert("conditions".into(), conditions);
            // Under `WhenAsked`, a key whose only allowed value is fixed is not written.
            if keys == ChoiceKeys::Always || !fields.is_empty() {
                properties.insert("sort".into(), sort);
            }
            if keys == ChoiceKeys::Always || !reading.counts.is_empty() {
                properties.insert("limit".into(), limit);
            }
            // Under `WhenAsked` an empty sort or a null limit is left out (`ChoiceKeys::written`),
            // so neither is required; the kernel reads a superlative's order itself.
            let required: Vec<&String> = properties
                .keys()
                .filter(|k| keys == ChoiceKeys::Always || !matches!(k.as_str(), "sort" | "limit"))
                .collect();
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false
            })
        })
        .collect();
    if refusal {
        alternatives.push(refusal_alternative());
    }
    json!({"anyOf": alternatives})
}

/// The user message under version 4: the objects, the question, the conditions read.
pub(super) fn choice_parts(
    p: &Projection,
    objects: &[String],
    question: &str,
    reading: &Reading,
    learned: &[(LearnedUse, String)],
) -> Vec<Part> {
    let order = asks_order(&reading.tokens);
    let lines: Vec<String> = focus(objects, reading)
        .iter()
        .filter_map(|k| p.object(k))
        .map(|o| {
            if order {
                format!("{} ({}): sort by {}", o.key, o.plural_label, sortable(p, &o.key).join(", "))
            } else {
                format!("{} ({})", o.key, o.plural_label)
            }
        })
        .collect();
    let mut parts = vec![Part::Untrusted { label: "objects".into(), content: lines.join("\n") }];
    if !learned.is_empty() {
        let texts: Vec<&str> = learned.iter().map(|(_, t)| t.as_str()).collect();
        parts.push(Part::Untrusted {
            label: "questions answered in this workspace before, as corrected by their users".into(),
            content: texts.join("\n\n"),
        });
    }
    parts.push(Part::Untrusted { label: "question".into(), content: question.to_string() });
    let conditions: Vec<String> = reading
        .candidates
        .iter()
        .map(|c| {
            format!("{} \"{}\" ({}): {}", c.id, c.words, c.object.as_deref().unwrap_or("any"), c.meaning)
        })
        .collect();
    parts.push(Part::Untrusted {
        label: "conditions".into(),
        content: if conditions.is_empty() { "none".into() } else { conditions.join("\n") },
    });
    parts
}

/// An example learned from a correction, as versions 4 and 5 use it: which of this question's
/// readings the corrected spec kept (its choice) and which it left out (declined).
pub(super) struct LearnedChoice {
    pub use_: LearnedUse,
    pub text: String,
    /// Meanings of readings the correction left out: the kernel does not add them back.
    pub declined: Vec<String>,
}

/// The top-level conditions of a spec's filter (an `all`'s members, an `any`'s members).
fn members(c: &Condition) -> Vec<&Condition> {
    match c {
        Condition::All(a) => a.all.iter().flat_map(members).collect(),
        Condition::Any(a) => a.any.iter().flat_map(members).chain(std::iter::once(c)).collect(),
        other => vec![other],
    }
}

impl Session<'_> {
    /// The learned examples like `question`, each as the choice its correction makes among
    /// this question's readings. (A stored question hides the values its user wrote, so the
    /// readings are this question's, matched against the corrected spec's conditions.)
    pub(super) fn learned_choices(
        &self,
        question: &str,
        p: &Projection,
        objects: &[String],
        reading: &Reading,
        keys: ChoiceKeys,
    ) -> Vec<LearnedChoice> {
        let mut out = vec![];
        for (use_, spec, _) in self.learned_specs_for(question, objects).into_iter().take(MAX_LEARNED) {
            let kept: Vec<&Condition> = spec.filters.as_ref().map(members).unwrap_or_default();
            let (mut chosen, mut declined, mut lines) = (vec![], vec![], vec![]);
            for c in &reading.candidates {
                let Some(on) = c.on(p, &spec.object) else { continue };
                if kept.contains(&&on) {
                    lines.push(format!("kept {} \"{}\": {}", c.id, c.words, c.meaning));
                    chosen.push(c.id.clone());
                } else {
                    lines.push(format!("left out {} \"{}\": {}", c.id, c.words, c.meaning));
                    declined.push(c.meaning.clone());
                }
            }
            let limit = spec.limit.filter(|l| *l != DEFAULT_LIMIT);
            let answer = keys.written(
                json!({"object": spec.object, "conditions": chosen, "sort": spec.sort, "limit": limit}),
            );
            let text = format!("question: {}\n{}\nchosen: {answer}", use_.question, lines.join("\n"));
            out.push(LearnedChoice { use_, text, declined });
        }
        out
    }
}

/// The question's words that no chosen condition, object, order or count uses, as phrases.
fn unused_words(
    reading: &Reading,
    chosen: &[&Candidate],
    p: &Projection,
    object: &str,
    sort: &[SortKey],
    limit: Option<u32>,
) -> Vec<String> {
    let t = &reading.tokens;
    let mut used = vec![false; t.len()];
    for c in chosen {
        for &i in c.span.iter().chain(&c.cue) {
            used[i] = true;
        }
    }
    // The superlative that set the order ("largest", "die größte").
    for o in reading.orders.iter().filter(|o| o.object == object) {
        if sort.first().is_some_and(|s| s.field == o.field) {
            for &i in &o.span {
                used[i] = true;
            }
        }
    }
    let mut known: Vec<String> = vec![];
    // The words naming a field a chosen reading compares ("a total over 10k" says "total").
    for c in chosen {
        let own = c.object.as_deref().unwrap_or(object);
        for f in c.condition.fields() {
            if let Some((_, field)) = p.field(own, f) {
                known.extend(tokens(&field.label).into_iter().map(|w| w.stem));
                known.extend(tokens(&field.key.replace('_', " ")).into_iter().map(|w| w.stem));
            }
        }
    }
    if let Some(o) = p.object(object) {
        known.extend(tokens(&o.label).into_iter().map(|w| w.stem));
        known.extend(tokens(&o.plural_label).into_iter().map(|w| w.stem));
        known.extend(tokens(&o.key.replace('_', " ")).into_iter().map(|w| w.stem));
        for s in sort {
            if let Some(f) = o.fields.iter().find(|f| f.key == s.field) {
                known.extend(tokens(&f.label).into_iter().map(|w| w.stem));
                known.extend(tokens(&f.key.replace('_', " ")).into_iter().map(|w| w.stem));
            }
        }
    }
    // The words naming a field of the queried object: a compared field, or a column shown.
    if let Some(o) = p.object(object) {
        for (_, words) in super::reader::fields_named(t, o) {
            for i in words {
                used[i] = true;
            }
        }
    }
    // The words naming the queried object, or a parent a chosen reading is on, in any language
    // or by a synonym; and the other-language labels of the fields the answer reads.
    let mut on: Vec<(&str, Vec<&str>)> = vec![(object, sort.iter().map(|s| s.field.as_str()).collect())];
    for c in chosen {
        on.push((c.object.as_deref().unwrap_or(object), c.condition.fields()));
    }
    for (o, fields) in on {
        if let Some(o) = p.object(o) {
            for i in words_naming(t, o, &fields) {
                used[i] = true;
            }
        }
    }
    // A pronoun for the records the question names itself is the object's word too.
    let object_said = p.object(object).is_some_and(|o| !words_naming(t, o, &[]).is_empty());
    for (i, w) in t.iter().enumerate() {
        if object_said && POINTING.contains(&w.lower.as_str()) {
            used[i] = true;
        }
        // The words of the count the answer shows (every count a limit may take was read there).
        let count = limit.is_some_and(|n| {
            reading.count_words.iter().any(|(from, to, c)| *c == n && (*from..=*to).contains(&i))
        });
        if FILLER.contains(&w.lower.as_str())
            || LIGHT_WORDS.contains(&w.lower.as_str())
            || ORDER_WORDS.contains(&w.lower.as_str())
            || known.contains(&w.stem)
            || count
            || !w.lower.chars().any(char::is_alphanumeric)
        {
            used[i] = true;
        }
    }
    let mut out: Vec<String> = vec![];
    let mut run: Vec<&str> = vec![];
    for (i, w) in t.iter().enumerate() {
        if used[i] {
            if !run.is_empty() {
                out.push(run.join(" "));
                run.clear();
            }
        } else {
            run.push(&w.text);
        }
    }
    if !run.is_empty() {
        out.push(run.join(" "));
    }
    out.dedup();
    out
}

/// The readings of one group joined with OR: values of one field as one `in` (one chip to
/// edit), anything else as an `any`.
fn one_of(mut members: Vec<Condition>) -> Condition {
    if members.len() == 1 {
        return members.remove(0);
    }
    let field = match &members[0] {
        Condition::Compare(c) => Some(c.field.clone()),
        _ => None,
    };
    let mut values: Vec<Value> = vec![];
    let same_field = members.iter().all(|m| match m {
        Condition::Compare(c) if Some(&c.field) == field.as_ref() && c.other_field.is_none() => {
            match (c.op, &c.value) {
                (Op::Eq, Some(v)) => {
                    values.push(v.clone());
                    true
                }
                (Op::In, Some(Value::Array(vs))) => {
                    values.extend(vs.iter().cloned());
                    true
                }
                _ => false,
            }
        }
        _ => false,
    });
    match field.filter(|_| same_field) {
        Some(field) => {
            let mut seen: Vec<Value> = vec![];
            values.retain(|v| {
                let first = !seen.contains(v);
                seen.push(v.clone());
                first
            });
            Condition::compare(field, Op::In, Value::Array(values))
        }
        None => Condition::Any(crate::metadata::condition::AnyOf { any: members }),
    }
}

impl Session<'_> {
    /// Check the model's choice and compose the spec from the chosen candidates.
    pub(super) fn choose(&self, run: &AskRun, content: &str) -> std::result::Result<Constrained, Violation> {
        let reading =
            run.state.reading.as_ref().ok_or_else(|| Violation::from("internal: no reading".to_string()))?;
        let mut doc: Value = serde_json::from_str(content.trim())
            .map_err(|e| format!("the answer is not valid JSON ({e})"))?;
        // An id written twice means the same (a grammar may not hold `uniqueItems`).
        if let Some(ids) = doc.get_mut("conditions").and_then(Value::as_array_mut) {
            let mut seen: Vec<Value> = vec![];
            ids.retain(|id| {
                let first = !seen.contains(id);
                seen.push(id.clone());
                first
            });
        }
        // An empty `sort` or a `null` limit written where they may be left out means the same.
        doc = run.state.keys.written(doc);
        let validator = jsonschema::validator_for(&run.state.schema).map_err(|e| format!("internal: {e}"))?;
        if let Some(e) = validator.iter_errors(&doc).next() {
            return Err(Violation::from(format!(
                "at {}: {e}",
                if e.instance_path().as_str().is_empty() { "/" } else { e.instance_path().as_str() }
            )));
        }
        // A refusal must name something the workspace lacks; one the schema contradicts (it
        // names a field, object, value or term the user can read) gets the repair, which may
        // not refuse.
        if let Some(reason) = doc.get("refusal").and_then(|r| r.get("reason")).and_then(Value::as_str) {
            if !run.state.repaired {
                if let Some(found) =
                    super::evidence::refusal_contradiction(&run.state.grounding.projection, reason)
                {
                    return Err(Violation::answerable(format!(
                        "the refusal \"{reason}\" is contradicted: {found}. Choose the object and the conditions."
                    )));
                }
            }
            return Ok(Constrained::Refusal(reason.chars().take(200).collect()));
        }
        let out: ChoiceOut = serde_json::from_value(doc)
            .map_err(|e| format!("the answer does not have the choice's shape ({e})"))?;
        let p = &run.state.grounding.projection;
        let allowed = self.ask_objects(p, &run.invocation.capability.settings);
        if !allowed.contains(&out.object) {
            return Err(Violation::from(format!("`{}` is not an object you may query", out.object)));
        }
        let object = out.object.clone();
        let mut chosen: Vec<&Candidate> = vec![];
        for id in &out.conditions {
            let c = reading
                .candidates
                .iter()
                .find(|c| &c.id == id)
                .ok_or_else(|| Violation::from(format!("`{id}` is not a listed condition")))?;
            if c.on(p, &object).is_none() {
                return Err(Violation::from(format!("{id} does not apply to {object}")));
            }
            if !chosen.iter().any(|x| x.id == c.id) {
                chosen.push(c);
            }
        }
        // The same words chosen in two readings (a department and an industry both called
        // "finance"): the reading on the queried object itself wins over a parent's.
        let overlaps = |a: &Candidate, b: &Candidate| a.span.iter().any(|i| b.span.contains(i));
        let own = |c: &Candidate| c.object.as_deref().is_none_or(|o| o == object);
        let doubled: Vec<String> = chosen
            .iter()
            .filter(|c| !own(c) && chosen.iter().any(|x| x.group != c.group && own(x) && overlaps(x, c)))
            .map(|c| c.id.clone())
            .collect();
        chosen.retain(|c| !doubled.contains(&c.id));
        // Two readings of the same words on fields of their own (a department and a title
        // "Engineer"): the first the model wrote is the answer's, the other stays a swap.
        let mut kept: Vec<&Candidate> = vec![];
        for c in chosen {
            if !kept.iter().any(|k| k.group != c.group && overlaps(k, c)) {
                kept.push(c);
            }
        }
        let mut chosen = kept;
        // A reading that is the only one of its words, applies to the queried object and
        // overlaps nothing chosen is the question's: the kernel never drops it silently.
        let applicable: Vec<&Candidate> =
            reading.candidates.iter().filter(|c| c.on(p, &object).is_some()).collect();
        for c in &applicable {
            let sole = !applicable.iter().any(|x| x.id != c.id && overlaps(x, c));
            let declined = run.state.declined.contains(&c.meaning);
            if sole && !declined && !chosen.iter().any(|x| overlaps(x, c)) {
                chosen.push(c);
            }
        }
        let sortable = sortable(p, &object);
        let mut sort: Vec<SortKey> = out
            .sort
            .into_iter()
            .filter(|s| sortable.contains(&s.field))
            .map(|s| SortKey { field: s.field, direction: s.direction.unwrap_or_default() })
            .collect();
        let mut limit = out.limit;
        // A superlative the kernel read decides the order and, in the singular, the count.
        if let Some(order) = reading.orders.iter().find(|o| o.object == object) {
            sort = vec![SortKey { field: order.field.clone(), direction: order.direction }];
            limit = order.limit.or(limit);
        }
        let mut planned =
            self.compose(p, &object, &chosen, sort, limit).map_err(|e| Violation::from(e.message))?;
        // A field the question names that no reading compares is a column to show.
        if let Some(o) = p.object(&object) {
            for (field, _) in super::reader::fields_named(&reading.tokens, o) {
                let shown = o.fields.iter().any(|f| f.key == field && f.field_type != FieldType::LongText);
                if shown && !planned.spec.fields.contains(&field) {
                    planned.spec.fields.push(field);
                }
            }
        }
        self.explain(&planned.spec).map_err(|e| Violation::from(e.message))?;
        let ids: Vec<String> = chosen.iter().map(|c| c.id.clone()).collect();
        let (read, unused) = shown_reading(reading, p, &planned.spec, &ids, &run.state.declined);
        Ok(Constrained::Plan(Box::new(Planned { read, unused, ..planned })))
    }

    fn compose(
        &self,
        p: &Projection,
        object: &str,
        chosen: &[&Candidate],
        sort: Vec<SortKey>,
        limit: Option<u32>,
    ) -> Result<Planned> {
        let mut fields = self.describe_object(object)?.list_columns;
        let mut groups: Vec<(String, Vec<Condition>)> = vec![];
        let (mut resolutions, mut values, mut dates, mut terms) = (vec![], vec![], vec![], vec![]);
        let lookup_to = |own: &str| super::reader::path_to(p, object, own);
        for c in chosen {
            let condition = c.on(p, object).ok_or_else(|| Error::internal("checked by choose"))?;
            // The path prefix the condition gained on a child ("account." on an invoice).
            let via = c.object.as_deref().filter(|own| *own != object).and_then(lookup_to);
            let path = |field: &str| via.as_ref().map_or(field.to_string(), |l| format!("{l}.{field}"));
            match c.kind {
                Kind::Record => {
                    if let Some(r) = &c.records {
                        let mut r = r.clone();
                        r.field = via.clone().unwrap_or_else(|| r.field.clone());
                        resolutions.push(r);
                    }
                }
                Kind::Date => {
                    if let Some(d) = &c.date {
                        dates.push(DateChoice { field: path(&d.field), ..d.clone() });
                    }
                }
                Kind::Term => {
                    if let Some((key, label)) = &c.term {
                        terms.push(TermChoice {
                            key: path(key),
                            label: label.clone(),
                            condition: condition.clone(),
                        });
                    }
                }
                _ => {}
            }
            for f in condition.fields() {
                let shown = p.field(object, f).is_some_and(|(_, x)| x.field_type != FieldType::Lookup);
                if shown && !fields.iter().any(|x| x == f) {
                    fields.push(f.to_string());
                }
            }
            // The words the user wrote, under each field the reading compares (the trace hides
            // them from a reader who may not read that field).
            let own = c.object.clone().unwrap_or_else(|| object.to_string());
            let compared: Vec<(String, String)> = match &c.condition {
                Condition::Related(r) => vec![(r.related.object.clone(), r.related.via.clone())],
                other => other.fields().into_iter().map(|f| (own.clone(), f.to_string())).collect(),
            };
            for (o, field) in compared {
                values.push(FieldValue { object: o, field, value: c.words.clone() });
            }
            match groups.iter_mut().find(|(g, _)| *g == c.group) {
                Some((_, members)) => members.push(condition),
                None => groups.push((c.group.clone(), vec![condition])),
            }
        }
        for s in &sort {
            if !fields.contains(&s.field) {
                fields.push(s.field.clone());
            }
        }
        let mut conditions: Vec<Condition> = groups.into_iter().map(|(_, members)| one_of(members)).collect();
        let spec = QuerySpec {
            search: None,
            object: object.to_string(),
            fields,
            filters: match conditions.len() {
                0 => None,
                1 => conditions.pop(),
                _ => Some(Condition::All(AllOf { all: conditions })),
            },
            sort,
            limit: Some(limit.unwrap_or(DEFAULT_LIMIT).min(1000)),
            offset: None,
            after: None,
        };
        Ok(Planned { spec, resolutions, values, dates, terms, written: vec![], read: vec![], unused: vec![] })
    }
}

/// What the answer shows of the reading: every candidate, chosen or not, on the queried
/// object; and the question's words no chosen candidate uses.
fn shown_reading(
    reading: &Reading,
    p: &Projection,
    spec: &QuerySpec,
    chosen_ids: &[String],
    declined: &[String],
) -> (Vec<ReadCondition>, Vec<String>) {
    let read: Vec<ReadCondition> = reading
        .candidates
        .iter()
        .map(|c| ReadCondition {
            id: c.id.clone(),
            words: c.words.clone(),
            meaning: c.meaning.clone(),
            chosen: chosen_ids.contains(&c.id),
            condition: c.on(p, &spec.object),
        })
        .collect();
    // A reading a learned correction left out is placed too: the person said it means nothing.
    let chosen: Vec<&Candidate> = reading
        .candidates
        .iter()
        .filter(|c| chosen_ids.contains(&c.id) || declined.contains(&c.meaning))
        .collect();
    let unused = unused_words(
        reading,
        &chosen,
        p,
        &spec.object,
        &spec.sort,
        spec.limit.filter(|l| *l != DEFAULT_LIMIT),
    );
    (read, unused)
}

/// The choice the kernel writes itself when the reading leaves the model nothing to choose:
/// one object to list, every reading applies to it, no two readings share a word, no number
/// that could be a count of rows or a value but the one an order the kernel read takes, an
/// order read wherever one is asked, and no learned example to weigh. Every reading is chosen;
/// the answer is checked as a model's would be (and the trust contract still asks back about
/// words no reading places). `None`: the model chooses.
pub(super) fn decided_choice(
    p: &Projection,
    objects: &[String],
    reading: &Reading,
    keys: ChoiceKeys,
    learned: bool,
) -> Option<Value> {
    let [object] = focus(objects, reading).try_into().ok()?;
    if learned || reading.candidates.iter().any(|c| c.on(p, &object).is_none()) {
        return None;
    }
    let overlap =
        reading.candidates.iter().enumerate().any(|(i, a)| {
            reading.candidates[i + 1..].iter().any(|b| a.span.iter().any(|w| b.span.contains(w)))
        });
    let order = reading.orders.iter().find(|o| o.object == object);
    let counts_taken = reading.counts.iter().all(|n| order.is_some_and(|o| o.limit == Some(*n)));
    if overlap || !counts_taken || (asks_order(&reading.tokens) && order.is_none()) {
        return None;
    }
    let ids: Vec<&str> = reading.candidates.iter().map(|c| c.id.as_str()).collect();
    Some(keys.written(json!({"object": object, "conditions": ids, "sort": [], "limit": null})))
}
