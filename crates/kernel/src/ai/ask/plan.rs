//! The model's answer checked (`constrain`: the one repair's reasons) and, under prompt
//! versions 1–3, its plan turned into the query spec (`plan_to_spec`: names resolved, terms
//! expanded, dates set).

use super::*;

impl Session<'_> {
    /// Parse and check the model's text; problems are returned as the exact message the repair
    /// attempt carries.
    pub(super) fn constrain(
        &self,
        run: &AskRun,
        content: &str,
    ) -> std::result::Result<Constrained, Violation> {
        if run.state.reading.is_some() {
            return self.choose(run, content);
        }
        let doc: Value = serde_json::from_str(content.trim())
            .map_err(|e| format!("the answer is not valid JSON ({e})"))?;
        if let Some(r) = doc.get("refusal") {
            let reason = r.get("reason").and_then(Value::as_str).unwrap_or("no reason given");
            if doc.as_object().is_some_and(|m| m.len() == 1) {
                // A refusal must name something the grounding lacks; one that names a field,
                // object or value the schema has (or a date, a number) is contradicted.
                if !run.state.repaired {
                    if let Some(found) = refusal_contradiction(&run.state.grounding.projection, reason) {
                        return Err(Violation::answerable(format!(
                            "the refusal \"{reason}\" is contradicted: {found}. Names, dates and numbers are filter values. Answer with a plan."
                        )));
                    }
                }
                return Ok(Constrained::Refusal(reason.chars().take(200).collect()));
            }
        }
        let plan: PlanOut = serde_json::from_value(doc.clone())
            .map_err(|e| format!("the answer does not have the plan's shape ({e})"))?;
        let p = &run.state.grounding.projection;
        let allowed = self.ask_objects(p, &run.invocation.capability.settings);
        if !allowed.contains(&plan.object) {
            return Err(Violation::from(format!(
                "`{}` is not an object you may query; use one of: {}",
                plan.object,
                allowed.join(", ")
            )));
        }
        if !plan.terms.is_empty() {
            let offered: Vec<String> = run
                .state
                .terms
                .iter()
                .flatten()
                .filter(|t| t.object == plan.object)
                .map(|t| t.key.clone())
                .collect();
            if let Some(t) = plan.terms.iter().find(|t| !offered.contains(t)) {
                return Err(Violation::from(format!(
                    "`{t}` is not a term of {}; terms: {}",
                    plan.object,
                    if offered.is_empty() { "none".to_string() } else { offered.join(", ") }
                )));
            }
        }
        for (i, f) in plan.filters.iter().enumerate() {
            let Some((_, field)) = p.field(&plan.object, &f.field) else {
                let known: Vec<String> = p.paths(&plan.object).into_iter().map(|(k, _)| k).collect();
                return Err(Violation::from(format!(
                    "filters[{i}]: `{}` is not a field of {} you may use; fields: {}",
                    f.field,
                    plan.object,
                    known.join(", ")
                )));
            };
            if f.op == "during" {
                let written = f.value.as_ref().and_then(Value::as_str).unwrap_or_default();
                if !matches!(field.field_type, FieldType::Date | FieldType::Datetime) {
                    return Err(Violation::from(format!(
                        "filters[{i}]: op `during` applies to date fields, not to `{}`",
                        f.field
                    )));
                }
                let Some(dates) = &run.state.dates else {
                    return Err(Violation::from(format!("filters[{i}]: unknown op `during`")));
                };
                if !dates.iter().any(|d| d.phrase == written) {
                    let listed: Vec<&str> = dates.iter().map(|d| d.phrase.as_str()).collect();
                    return Err(Violation::from(format!(
                        "filters[{i}]: \"{written}\" is not a date the question names; dates: {}",
                        if listed.is_empty() { "none".to_string() } else { listed.join(", ") }
                    )));
                }
                continue;
            }
            if !OPS.contains(&f.op.as_str()) {
                return Err(Violation::from(format!("filters[{i}]: unknown op `{}`", f.op)));
            }
            let (scalar, list) = ops_for(field.field_type);
            let blank = f.op == "is_set" || f.op == "is_blank";
            if !blank && !scalar.contains(&f.op.as_str()) && !list.contains(&f.op.as_str()) {
                return Err(Violation::from(format!(
                    "filters[{i}]: op `{}` does not apply to {} field `{}`",
                    f.op,
                    field.field_type.key(),
                    f.field
                )));
            }
            if field.field_type == FieldType::Picklist && !blank {
                let vals: Vec<&Value> = match &f.value {
                    Some(Value::Array(a)) => a.iter().collect(),
                    Some(v) => vec![v],
                    None => vec![],
                };
                for v in vals {
                    if !field.values.iter().any(|(k, _)| Some(k.as_str()) == v.as_str()) {
                        let active: Vec<&str> = field.values.iter().map(|(k, _)| k.as_str()).collect();
                        return Err(Violation::from(format!(
                            "filters[{i}]: {v} is not an active value of `{}`; values: {}",
                            f.field,
                            active.join(", ")
                        )));
                    }
                }
            }
        }
        for s in &plan.sort {
            if p.field(&plan.object, &s.field).is_none() {
                return Err(Violation::from(format!(
                    "sort: `{}` is not a field of {} you may use",
                    s.field, plan.object
                )));
            }
        }
        let validator = jsonschema::validator_for(&run.state.schema).map_err(|e| format!("internal: {e}"))?;
        if let Some(e) = validator.iter_errors(&doc).next() {
            return Err(Violation::from(format!(
                "at {}: {e}",
                if e.instance_path().as_str().is_empty() { "/" } else { e.instance_path().as_str() }
            )));
        }
        check_evidence(&run.state.question, p, &plan).map_err(|u| Violation {
            message: u.message,
            refusal_allowed: false,
            unasked: u.field,
        })?;
        if !run.state.repaired {
            check_unused_values(&run.state.question, p, &plan, run.state.terms.is_some())
                .map_err(Violation::answerable)?;
        }
        // The values written for text-like fields and lookups, for the data check below.
        let written: Vec<Written> = plan
            .filters
            .iter()
            .filter(|f| matches!(f.op.as_str(), "eq" | "in" | "contains"))
            .filter(|f| {
                p.field(&plan.object, &f.field)
                    .is_some_and(|(_, x)| x.field_type.is_textual() || x.field_type == FieldType::Lookup)
            })
            .flat_map(|f| {
                let values: Vec<String> = match &f.value {
                    Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(String::from).collect(),
                    Some(Value::String(v)) => vec![v.clone()],
                    _ => vec![],
                };
                values.into_iter().map(|value| Written { path: f.field.clone(), value })
            })
            .collect();
        let planned =
            self.plan_to_spec(p, plan, run.state.dates.as_deref()).map_err(|e| Violation::from(e.message))?;
        let (spec, resolutions) = (&planned.spec, &planned.resolutions);
        for r in
            resolutions.iter().filter(|r| r.status == ResolutionStatus::Unmatched && r.object == spec.object)
        {
            let holders: Vec<String> = p
                .paths(&spec.object)
                .into_iter()
                .filter(|(_, f)| {
                    f.values.iter().any(|(v, l)| {
                        normal_text(v) == normal_text(&r.written) || normal_text(l) == normal_text(&r.written)
                    })
                })
                .map(|(k, _)| k)
                .collect();
            if !holders.is_empty() && !holders.contains(&r.field) {
                return Err(Violation::answerable(format!(
                    "no {} has {} \"{}\", but it is a value of the picklist {}; use that field",
                    spec.object,
                    r.field,
                    r.written,
                    holders.join(", ")
                )));
            }
        }
        self.explain(spec).map_err(|e| Violation::from(e.message))?;
        Ok(Constrained::Plan(Box::new(Planned { written, ..planned })))
    }

    pub(super) fn plan_to_spec(
        &self,
        p: &Projection,
        plan: PlanOut,
        dates: Option<&[DateRange]>,
    ) -> Result<Planned> {
        let mut conditions = vec![];
        let mut resolutions = vec![];
        let mut values = vec![];
        let mut chosen = vec![];
        let mut fields = self.describe_object(&plan.object)?.list_columns;
        // Terms first: each is one condition (a chip), its fields shown as columns.
        let mut terms = vec![];
        for (i, key) in plan.terms.iter().enumerate() {
            if plan.terms[..i].contains(key) {
                continue; // named twice: one condition
            }
            let (_, term, condition) = p
                .terms(&plan.object)
                .into_iter()
                .find(|(k, _, _)| k == key)
                .ok_or_else(|| Error::internal("checked above"))?;
            for path in condition.fields() {
                let shown =
                    p.field(&plan.object, path).is_some_and(|(_, f)| f.field_type != FieldType::Lookup);
                if shown && !fields.iter().any(|f| f == path) {
                    fields.push(path.to_string());
                }
            }
            conditions.push(condition.clone());
            terms.push(TermChoice { key: key.clone(), label: term.label.clone(), condition });
        }
        for f in plan.filters {
            let (owner, field) =
                p.field(&plan.object, &f.field).ok_or_else(|| Error::internal("checked above"))?;
            let op = f.op.as_str();
            let list: Vec<Value> = match &f.value {
                Some(Value::Array(a)) => a.clone(),
                Some(v) => vec![v.clone()],
                None => vec![],
            };
            for v in &list {
                values.push(FieldValue {
                    object: owner.key.clone(),
                    field: field.key.clone(),
                    value: v.as_str().map(String::from).unwrap_or_else(|| v.to_string()),
                });
            }
            if op == "during" {
                // A date phrase the kernel read: its range, first and last day included.
                let range = dates
                    .into_iter()
                    .flatten()
                    .find(|d| Some(d.phrase.as_str()) == f.value.as_ref().and_then(Value::as_str))
                    .ok_or_else(|| Error::internal("checked above"))?;
                // One condition (a chip) for the range: both ends together.
                let mut ends = date_conditions(&f.field, field.field_type, range, self.time_zone());
                conditions.push(match ends.len() {
                    1 => ends.remove(0),
                    _ => Condition::All(crate::metadata::condition::AllOf { all: ends }),
                });
                chosen.push(DateChoice {
                    field: f.field.clone(),
                    phrase: range.phrase.clone(),
                    start: range.start.map(|d| d.to_string()),
                    end: range.end.map(|d| d.to_string()),
                });
                if !fields.contains(&f.field) {
                    fields.push(f.field.clone());
                }
                continue;
            }
            let mut path = f.field.clone();
            let mut value = f.value.clone();
            let resolvable = matches!(op, "eq" | "ne" | "in" | "not_in")
                && (field.field_type.is_textual() || field.field_type == FieldType::Lookup)
                && !list.is_empty();
            if resolvable {
                // Resolve written names against readable records (lookups, name fields) or
                // against stored values (other text fields).
                let mut resolved = vec![];
                for v in list.iter().filter_map(Value::as_str) {
                    let r = if field.field_type == FieldType::Lookup {
                        self.resolve_name(field.target.as_deref().unwrap_or_default(), &path, v)?
                    } else if field.key == owner.name_field {
                        self.resolve_name(&owner.key, &path, v)?
                    } else {
                        self.resolve_text(&plan.object, &path, v)?
                    };
                    resolved.push(r);
                }
                // Records that all bear the very name written are one answer, not a choice.
                for r in resolved.iter_mut().filter(|r| r.status == ResolutionStatus::Ambiguous) {
                    let literal = normal_text(&r.written);
                    if field.field_type != FieldType::Lookup
                        && r.matches.iter().all(|c| normal_text(&c.name) == literal)
                    {
                        r.status = ResolutionStatus::Resolved;
                    }
                }
                let mut out_values: Vec<Value> = vec![];
                for r in &resolved {
                    match r.status {
                        // Resolved: the one match; ambiguous: every candidate (the query is not
                        // run until the user chooses).
                        ResolutionStatus::Resolved | ResolutionStatus::Ambiguous => {
                            out_values.extend(r.matches.iter().map(|c| {
                                Value::String(if field.field_type == FieldType::Lookup {
                                    c.id.clone()
                                } else {
                                    c.name.clone()
                                })
                            }))
                        }
                        ResolutionStatus::Unmatched => out_values.push(Value::String(r.written.clone())),
                    }
                }
                // A parent's name path (`account.name`) becomes the lookup itself.
                if field.field_type != FieldType::Lookup
                    && owner.key != plan.object
                    && field.key == owner.name_field
                {
                    if let Some((lookup, _)) = path.split_once('.') {
                        path = lookup.to_string();
                        out_values = resolved
                            .iter()
                            .flat_map(|r| r.matches.iter().map(|c| Value::String(c.id.clone())))
                            .collect();
                        if out_values.is_empty() {
                            out_values = resolved
                                .iter()
                                .map(|r| Value::String(format!("(no match: {})", r.written)))
                                .collect();
                        }
                    }
                }
                resolutions.extend(
                    resolved
                        .into_iter()
                        .filter(|r| !r.matches.is_empty() || r.status == ResolutionStatus::Unmatched),
                );
                value = Some(match (op, out_values.len()) {
                    ("eq" | "ne", 1) => out_values.remove(0),
                    _ => Value::Array(out_values),
                });
            }
            let op = match (op, &value) {
                ("eq", Some(Value::Array(_))) => "in",
                ("ne", Some(Value::Array(_))) => "not_in",
                (o, _) => o,
            };
            let compare = |op: Op| {
                Condition::Compare(Comparison {
                    field: path.clone(),
                    op,
                    value: value.clone(),
                    other_field: None,
                })
            };
            conditions.push(match op {
                "not_in" => Condition::Not(NotOf { not: Box::new(compare(Op::In)) }),
                o => compare(
                    serde_json::from_value(Value::String(o.into()))
                        .map_err(|e| Error::internal(e.to_string()))?,
                ),
            });
            if !fields.contains(&f.field)
                && p.field(&plan.object, &f.field).is_some_and(|(_, x)| x.field_type != FieldType::Lookup)
            {
                fields.push(f.field.clone());
            }
        }
        let sort: Vec<SortKey> = plan
            .sort
            .into_iter()
            .map(|s| SortKey { field: s.field, direction: s.direction.unwrap_or_default() })
            .collect();
        for s in &sort {
            if !fields.contains(&s.field) {
                fields.push(s.field.clone());
            }
        }
        let spec = QuerySpec {
            search: None,
            object: plan.object,
            fields,
            filters: match conditions.len() {
                0 => None,
                1 => conditions.pop(),
                _ => Some(Condition::All(crate::metadata::condition::AllOf { all: conditions })),
            },
            sort,
            limit: Some(plan.limit.unwrap_or(DEFAULT_LIMIT).min(1000)),
            offset: None,
            after: None,
        };
        Ok(Planned {
            spec,
            resolutions,
            values,
            dates: chosen,
            terms,
            written: vec![],
            read: vec![],
            unused: vec![],
        })
    }
}
