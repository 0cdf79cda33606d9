//! The facts a summary stands on: the record's readable AI-visible fields, its parents' and
//! children's (versions 1 and 2), or the ranked fact sheet with the rollups (version 3); facts
//! a model's tool call adds; and each fact as the prompt lists it.

use super::*;

/// How a fact's value may appear in the prompt (as stored, and as it reads), for the trace
/// to hide from readers who cannot read its field.
pub(super) fn traced_values(f: &Fact) -> Vec<crate::ai::pipeline::FieldValue> {
    let stored = f.value.as_str().map(String::from).unwrap_or_else(|| f.value.to_string());
    [stored, f.display.clone()]
        .into_iter()
        .filter(|v| !v.is_empty() && v != "null")
        .map(|value| crate::ai::pipeline::FieldValue {
            object: f.object.clone(),
            field: f.field.clone(),
            value,
        })
        .collect()
}

/// The token budget of version 3's fact sheet (the ranked facts past it are left out).
pub const SHEET_TOKENS: u64 = 450;

/// A fact as version 3's sheet lists it: `{open_opportunities_count} = 3 (number of open opportunities)`.
pub(super) fn sheet_line(f: &Fact, w: &slots::Writing) -> String {
    let label = if f.set.is_some() { f.label.clone() } else { f.label.to_lowercase() };
    format!("{{{}}} = {} ({label})", f.reference, slots::rendered(f, w))
}

/// A tool call, when the answer is one (`{"tool": …}`): parsed with the tool's closed input, so
/// an unknown tool or input is an `invalid_input` failure for the model, not a broken answer.
pub(super) fn tool_request(content: &str) -> Option<std::result::Result<ToolCall, ToolFailure>> {
    let v: Value = crate::ai::contract::parse_answer(content).ok()?;
    v.get("tool")?;
    Some(crate::ai::tools::parse_call(&v))
}

/// A corpus hit as a fact.
pub(super) fn passage(h: &Value) -> Fact {
    Fact {
        reference: String::new(),
        object: h["object"].as_str().unwrap_or_default().into(),
        id: h["id"].as_str().unwrap_or_default().into(),
        field: h["field"].as_str().unwrap_or_default().into(),
        label: "passage".into(),
        field_type: "long_text".into(),
        value: h["snippet"].clone(),
        display: h["snippet"].as_str().unwrap_or_default().replace(['[', ']'], ""),
        record_name: h["name"].as_str().unwrap_or_default().into(),
        set: None,
        currency: None,
    }
}

/// A fact as the model reads it: `F3 account “Acme” annual_revenue (currency): 5120`.
pub(super) fn fact_line(f: &Fact) -> String {
    format!("{} {} “{}” {} ({}): {}", f.reference, f.object, f.record_name, f.field, f.field_type, f.display)
}

pub(super) fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Session<'_> {
    /// The facts about a record: its readable AI-visible fields, its parents' and children's
    /// (one hop), and corpus passages that name it — all through the kernel tools on this
    /// session. A tool that fails is reported to the model as a typed failure.
    pub fn summary_facts(&self, object: &str, id: &str) -> Result<(Vec<Fact>, Vec<String>)> {
        let mut facts = vec![];
        let mut failures = vec![];
        let record = run_tool(self, &ToolCall::ReadRecord { object: object.into(), id: id.into() })
            .map_err(|f| Error::new(Code::NotFound, f.message))?;
        let name = record["name"].as_str().unwrap_or(id).to_string();
        self.facts_of(&record, &mut facts);
        match run_tool(self, &ToolCall::ListRelated { object: object.into(), id: id.into(), limit: Some(5) })
        {
            Ok(related) => {
                for r in related["records"].as_array().into_iter().flatten() {
                    let before = facts.len();
                    self.facts_of(r, &mut facts);
                    // A related record contributes its name and its first few other values
                    // (not the lookup back to the subject), to keep the prompt small.
                    let mut kept = 0;
                    let mut i = before;
                    while i < facts.len() {
                        let f = &facts[i];
                        let is_name = f.display == f.record_name;
                        let back = f.field_type == "lookup" && f.display == name;
                        if back || (!is_name && kept >= 4) {
                            facts.remove(i);
                            continue;
                        }
                        if !is_name {
                            kept += 1;
                        }
                        i += 1;
                    }
                }
            }
            Err(f) => failures.push(format!("list_related failed ({}): {}", f.kind, f.message)),
        }
        match run_tool(self, &ToolCall::SearchCorpus { text: name.clone(), limit: Some(3) }) {
            Ok(hits) => {
                // Passages that name this record (the search matches any of the name's words).
                let about = |h: &&Value| {
                    h["snippet"].as_str().is_some_and(|t| {
                        t.replace(['[', ']'], "").to_lowercase().contains(&name.to_lowercase())
                    })
                };
                facts.extend(hits["hits"].as_array().into_iter().flatten().filter(about).map(passage));
            }
            Err(f) => failures.push(format!("search_corpus failed ({}): {}", f.kind, f.message)),
        }
        // A passage already among the facts (a note read as a related record) is kept once.
        let mut seen = std::collections::HashSet::new();
        facts.retain(|f| seen.insert((f.object.clone(), f.id.clone(), f.field.clone())));
        for (i, f) in facts.iter_mut().enumerate() {
            f.reference = format!("F{}", i + 1);
        }
        Ok((facts, failures))
    }

    /// A tool the model asked for, run on this session: its values become more facts (numbered
    /// on from the last), or its typed failure goes back to the model; either way the run goes
    /// on with another call. With no tool calls left the answer's schema no longer offers them.
    pub(super) fn run_model_tool(
        &self,
        run: &mut SummarizeRun,
        call: std::result::Result<ToolCall, ToolFailure>,
    ) {
        run.state.tool_calls += 1;
        let outcome = call.and_then(|c| run_tool(self, &c).map(|out| (c, out)));
        let part = match outcome {
            Ok((call, out)) => {
                let mut more = vec![];
                if out["fields"].is_array() {
                    self.facts_of(&out, &mut more);
                }
                for r in out["records"].as_array().into_iter().flatten() {
                    self.facts_of(r, &mut more);
                }
                more.extend(out["hits"].as_array().into_iter().flatten().map(passage));
                more.retain(|f| {
                    !run.state
                        .facts
                        .iter()
                        .any(|g| g.object == f.object && g.id == f.id && g.field == f.field)
                });
                for f in &mut more {
                    f.reference = format!("F{}", run.state.facts.len() + 1);
                    run.invocation.values.extend(traced_values(f));
                    run.state.facts.push(f.clone());
                }
                let lines: Vec<String> = more
                    .iter()
                    .map(|f| match &run.state.slots {
                        Some(w) => sheet_line(f, w),
                        None => fact_line(f),
                    })
                    .collect();
                let name = match call {
                    ToolCall::ReadRecord { .. } => "read_record",
                    ToolCall::ListRelated { .. } => "list_related",
                    ToolCall::SearchCorpus { .. } => "search_corpus",
                };
                let content = if lines.is_empty() { "(no new facts)".to_string() } else { lines.join("\n") };
                Part::Untrusted { label: format!("more facts from {name}"), content }
            }
            Err(f) => Part::Untrusted { label: format!("tool failure {}", f.kind), content: f.message },
        };
        run.request.prompt.parts.push(part);
        let tools_left = run.state.tool_calls < MAX_TOOL_CALLS;
        if !tools_left {
            run.request.prompt.parts.push(Part::Request("Write the summary now.".into()));
        }
        let (checked, requested) = match &run.state.slots {
            // Version 3: the new facts are slots too ({F24}), held at decode time like the rest.
            Some(_) => {
                let keys: Vec<String> = run.state.facts.iter().map(|f| f.reference.clone()).collect();
                (answer_schema(tools_left, None, 12), answer_schema(tools_left, Some(&keys), MOST_SENTENCES))
            }
            None => {
                let schema = answer_schema(tools_left, None, 6);
                (schema.clone(), schema)
            }
        };
        run.state.schema = checked;
        if let Some((_, schema)) = run.request.schema.as_mut() {
            *schema = requested;
        }
    }

    /// Prompt version 3's facts: the record's own readable, AI-visible values and the kernel's
    /// rollups over its related lists (`rollups`), ranked by what a reader needs first and held
    /// to `SHEET_TOKENS`.
    pub fn fact_sheet(&self, object: &str, id: &str) -> Result<(Vec<Fact>, Vec<String>)> {
        let record = run_tool(self, &ToolCall::ReadRecord { object: object.into(), id: id.into() })
            .map_err(|f| Error::new(Code::NotFound, f.message))?;
        let name = record["name"].as_str().unwrap_or(id).to_string();
        let mut own = vec![];
        self.facts_of(&record, &mut own);
        let p = self.whole_grounding();
        // An amount is in the currency its record states (an invoice in GBP), which its slot
        // then writes; the code is no fact of its own beside them.
        let code_field =
            p.projection.objects.iter().find(|o| o.key == object).and_then(rollups::currency_code);
        let code = own
            .iter()
            .find(|f| Some(f.field.as_str()) == code_field)
            .and_then(|f| f.value.as_str())
            .map(String::from);
        let writing = self.writing();
        let record_currency = code.clone().unwrap_or_else(|| writing.currency.clone());
        if let (Some(code), Some(code_field)) = (code, code_field) {
            if own.iter().any(|f| f.field_type == "currency") {
                own.retain(|f| f.field != code_field);
                for f in own.iter_mut().filter(|f| f.field_type == "currency") {
                    f.currency = Some(code.clone());
                }
            }
        }
        let meta = self.catalog().object_meta(object)?;
        let mut ranked: Vec<rollups::Ranked> = own
            .into_iter()
            .map(|fact| {
                let rank = match fact.field_type.as_str() {
                    _ if fact.field == meta.def.name_field => 110,
                    "picklist" => 75,
                    "currency" => 70,
                    "date" | "datetime" => 50,
                    "lookup" => 45,
                    "long_text" => 10,
                    _ => 30,
                };
                rollups::Ranked { fact, rank }
            })
            .collect();
        ranked.extend(self.rollups(&p.projection, object, id, &name, &record_currency));
        ranked.sort_by_key(|r| std::cmp::Reverse(r.rank));
        let mut facts = vec![];
        let mut tokens = 0;
        for mut r in ranked {
            // A slot is named by what it holds: the field's key, or the rollup's name.
            if r.fact.set.is_none() {
                r.fact.reference = r.fact.field.clone();
            }
            if facts.iter().any(|f: &Fact| f.reference == r.fact.reference) {
                continue;
            }
            let cost = crate::ai::projection::estimate_tokens(&sheet_line(&r.fact, &writing));
            if tokens + cost > SHEET_TOKENS {
                continue;
            }
            tokens += cost;
            facts.push(r.fact);
        }
        Ok((facts, vec![]))
    }

    /// The fact sheet of a record as a reader reads it, one fact per line, without slots
    /// ("total of overdue invoices in EUR: 88,850.00 EUR"): what a summary stands on, and what
    /// a judge reads it against.
    pub fn fact_lines(&self, object: &str, id: &str) -> Result<String> {
        let (facts, _) = self.fact_sheet(object, id)?;
        let writing = self.writing();
        Ok(facts
            .iter()
            .map(|f| format!("{}: {}", f.label.to_lowercase(), slots::rendered(f, &writing)))
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// How this session's summaries write values: its user's locale, the workspace's currency.
    pub(super) fn writing(&self) -> slots::Writing {
        slots::Writing {
            currency: self.catalog().definition.currency.clone(),
            locale: self.locale(),
            unheld: vec![],
        }
    }

    /// The words of the values (labels in English and the reader's language, and categories)
    /// that the record's own picklists offer and its facts do not hold: a word a sentence may
    /// not say of it.
    pub(super) fn unheld_words(&self, object: &str, facts: &[Fact]) -> Vec<String> {
        let Ok(meta) = self.catalog().object_meta(object) else { return vec![] };
        let language = self.locale().language();
        let words = |v: &crate::metadata::types::PicklistValue| -> Vec<String> {
            [v.label.as_str(), v.label_in(language), v.category.as_deref().unwrap_or_default()]
                .iter()
                .flat_map(|t| slots::lowercase_words(t))
                .filter(|w| w.chars().count() >= 3)
                .collect()
        };
        let mut unheld: Vec<String> = vec![];
        for field in &meta.def.fields {
            let Some(values) = &field.values else { continue };
            let own = facts.iter().find(|f| f.set.is_none() && f.object == object && f.field == field.key);
            let held: Vec<String> = values
                .iter()
                .filter(|v| own.is_some_and(|f| f.value.as_str() == Some(v.value.as_str())))
                .flat_map(words)
                .collect();
            unheld.extend(values.iter().flat_map(words).filter(|w| !held.contains(w)));
        }
        unheld.sort();
        unheld.dedup();
        unheld
    }

    pub(super) fn facts_of(&self, record: &Value, facts: &mut Vec<Fact>) {
        let object = record["object"].as_str().unwrap_or_default();
        let id = record["id"].as_str().unwrap_or_default();
        let name = record["name"].as_str().unwrap_or(id);
        for f in record["fields"].as_array().into_iter().flatten() {
            // Contact details (phone, e-mail, web address) are on the record page; in a summary
            // the small model only wrote "it has a website" about them, citing a value it did
            // not write. They are not facts for a summary.
            let contact = matches!(f["type"].as_str(), Some("phone" | "email" | "url"));
            if f["value"].is_null() || contact {
                continue;
            }
            facts.push(Fact {
                reference: String::new(),
                object: object.into(),
                id: id.into(),
                field: f["field"].as_str().unwrap_or_default().into(),
                label: f["label"].as_str().unwrap_or_default().into(),
                field_type: f["type"].as_str().unwrap_or_default().into(),
                value: f["value"].clone(),
                display: f["display"].as_str().map(String::from).unwrap_or_else(|| display(&f["value"])),
                record_name: name.into(),
                set: None,
                currency: None,
            });
        }
    }
}
