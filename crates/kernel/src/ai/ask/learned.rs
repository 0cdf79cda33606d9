//! Learning from corrections: when a user edits an answer's spec and runs it or saves it as a
//! list view, the (question, corrected spec) pair is kept in the workspace with who and when.
//! A later question finds the most similar kept questions (FTS5, bm25 over the questions) and
//! gets them as worked examples — after the shared prompt prefix (the made-up examples and the
//! schema), so the model server's prompt cache stays warm.
//!
//! An example is only ever offered to a user who could have written it: its object is one Ask
//! may query for them, every field it filters or sorts on is in their projection, the spec
//! compiles on their session, and every record it names (a lookup's id, a name) is one they
//! can read — its name is read on their session. Anything else and the example is skipped.
//! Users see and delete what was learned (`learned_examples`, `forget_example`).

use super::*;
use crate::ai::pipeline::TraceOutcome;
use crate::metadata::permissions::AI_MANAGE;
use rusqlite::{params, OptionalExtension};

/// The most learned examples one prompt carries.
pub const MAX_LEARNED: usize = 2;

/// How many of the best-matching questions are looked at before access filtering.
const CANDIDATES: usize = 12;

/// A kept correction.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LearnedExample {
    pub id: String,
    pub question: String,
    pub object: String,
    pub spec: QuerySpec,
    pub created_by: String,
    pub created_at: String,
    /// The answer it corrected.
    pub trace_id: String,
    /// The user may delete it: its author, or a user with `ai.manage`.
    pub can_delete: bool,
}

/// A learned example a prompt carried, as the answer names it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LearnedUse {
    pub id: String,
    pub question: String,
}

/// Specs compare without paging.
fn unpaged(spec: &QuerySpec) -> QuerySpec {
    QuerySpec { offset: None, after: None, ..spec.clone() }
}

impl Session<'_> {
    /// Keep the correction of one of this user's answered Ask calls: `spec` is what the user
    /// ran or saved after editing the answer. `None` when the spec is the one the answer ran
    /// (nothing was corrected). One example per answer: a later correction replaces it.
    pub fn ask_learn(&self, trace_id: &str, spec: &QuerySpec) -> Result<Option<LearnedExample>> {
        let binding = self.capability(CAPABILITY)?;
        self.require(&binding.required_permission)?;
        let not_yours = || Error::new(Code::NotFound, format!("no answered question `{trace_id}` of yours"));
        let t = self.trace(trace_id).map_err(|_| not_yours())?;
        if t.actor != self.user().key || t.capability != CAPABILITY || t.outcome != TraceOutcome::Answered {
            return Err(not_yours());
        }
        let answered: Option<QuerySpec> =
            t.result.as_ref().and_then(|r| serde_json::from_value(r["spec"].clone()).ok());
        if answered.as_ref().map(unpaged) == Some(unpaged(spec)) {
            return Ok(None);
        }
        // The corrected spec must be one this user can run.
        self.explain(spec)?;
        let spec_text = serde_json::to_string(&unpaged(spec)).map_err(|e| Error::internal(e.to_string()))?;
        let id = self.ws.ids.record_id("ask_example");
        let now = crate::clock::timestamp(self.ws.clock.now());
        let tx = crate::store::immediate(self.ws.conn())?;
        let old: Option<String> = tx
            .query_row("SELECT id FROM ask_example WHERE trace_id = ?1", [trace_id], |r| r.get(0))
            .optional()?;
        if let Some(old) = old {
            tx.execute("DELETE FROM ask_example_text WHERE example_id = ?1", [&old])?;
            tx.execute("DELETE FROM ask_example WHERE id = ?1", [&old])?;
        }
        tx.execute(
            "INSERT INTO ask_example (id, trace_id, question, object, spec, created_by, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![id, trace_id, t.input, spec.object, spec_text, self.user().key, now],
        )?;
        tx.execute(
            "INSERT INTO ask_example_text (example_id, question) VALUES (?1, ?2)",
            params![id, t.input],
        )?;
        tx.commit()?;
        tracing::info!(object = %spec.object, "ask correction kept as an example");
        Ok(Some(LearnedExample {
            id,
            question: t.input,
            object: spec.object.clone(),
            spec: unpaged(spec),
            created_by: self.user().key.clone(),
            created_at: now,
            trace_id: trace_id.to_string(),
            can_delete: true,
        }))
    }

    /// Every kept example this user could be offered (see the module's access rules), newest
    /// first.
    pub fn learned_examples(&self) -> Result<Vec<LearnedExample>> {
        let p = self.whole_grounding();
        let mut stmt = self.ws.conn().prepare(
            "SELECT id, trace_id, question, object, spec, created_by, created_at FROM ask_example ORDER BY created_at DESC, id DESC",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                ))
            })?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let manage = self.user().has_system_permission(AI_MANAGE);
        Ok(rows
            .into_iter()
            .filter_map(|(id, trace_id, question, object, spec, created_by, created_at)| {
                let spec: QuerySpec = serde_json::from_str(&spec).ok()?;
                self.example_plan(&p.projection, &spec, &question, &created_at, false)?;
                let can_delete = manage || created_by == self.user().key;
                Some(LearnedExample {
                    id,
                    question,
                    object,
                    spec,
                    created_by,
                    created_at,
                    trace_id,
                    can_delete,
                })
            })
            .collect())
    }

    /// Delete a kept example: its author, or a user with `ai.manage`.
    pub fn forget_example(&self, id: &str) -> Result<()> {
        let example = self
            .learned_examples()?
            .into_iter()
            .find(|e| e.id == id)
            .ok_or_else(|| Error::new(Code::NotFound, format!("no learned example `{id}`")))?;
        if !example.can_delete {
            return Err(Error::new(
                Code::Permission,
                "only its author or a user with ai.manage may delete a learned example",
            ));
        }
        let tx = crate::store::immediate(self.ws.conn())?;
        tx.execute("DELETE FROM ask_example_text WHERE example_id = ?1", [id])?;
        tx.execute("DELETE FROM ask_example WHERE id = ?1", [id])?;
        tx.commit()?;
        tracing::info!("learned ask example deleted");
        Ok(())
    }

    /// The kept examples most like `question` that this user may be offered, as (use, the
    /// question, its plan in the contract's form), best first.
    pub(super) fn learned_for(
        &self,
        question: &str,
        p: &Projection,
        objects: &[String],
    ) -> Vec<(LearnedUse, String)> {
        self.learned_specs_for(question, objects)
            .into_iter()
            .filter_map(|(use_, spec, created_at)| {
                let plan = self.example_plan(p, &spec, &use_.question, &created_at, true)?;
                Some((use_, plan))
            })
            .take(MAX_LEARNED)
            .collect()
    }

    /// The corrected specs of the examples most like `question`, on objects in `objects`,
    /// with when each was made (a spec the user can no longer run is left out).
    pub(super) fn learned_specs_for(
        &self,
        question: &str,
        objects: &[String],
    ) -> Vec<(LearnedUse, QuerySpec, String)> {
        let words: Vec<String> = question
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() > 2)
            .map(|w| format!("\"{}\"", w.to_lowercase()))
            .collect();
        if words.is_empty() {
            return vec![];
        }
        let found = || -> Result<Vec<(String, String, String, String)>> {
            let mut stmt = self.ws.conn().prepare(
                "SELECT e.id, e.question, e.spec, e.created_at FROM ask_example_text t
                 JOIN ask_example e ON e.id = t.example_id
                 WHERE ask_example_text MATCH ?1 ORDER BY bm25(ask_example_text) LIMIT ?2",
            )?;
            let rows = stmt
                .query_map(params![words.join(" OR "), CANDIDATES as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(rows)
        };
        let rows = found().unwrap_or_else(|e| {
            tracing::warn!(code = ?e.code, "learned examples could not be searched");
            vec![]
        });
        rows.into_iter()
            .filter_map(|(id, q, spec, created_at)| {
                let spec: QuerySpec = serde_json::from_str(&spec).ok()?;
                if !objects.contains(&spec.object) || self.explain(&spec).is_err() {
                    return None;
                }
                Some((LearnedUse { id, question: q }, spec, created_at))
            })
            .collect()
    }

    /// A kept spec as the plan a model would write for its question, read on this user's
    /// session; `None` when this user may not be offered it or the contract cannot say it.
    /// With `names`, the records it names are written by their names (as this user reads them).
    fn example_plan(
        &self,
        p: &Projection,
        spec: &QuerySpec,
        question: &str,
        created_at: &str,
        names: bool,
    ) -> Option<String> {
        self.explain(spec).ok()?;
        let object = p.object(&spec.object)?;
        let conditions: Vec<Condition> = match &spec.filters {
            None => vec![],
            Some(Condition::All(all)) => all.all.clone(),
            Some(c) => vec![c.clone()],
        };
        let at = chrono::DateTime::parse_from_rfc3339(created_at).ok()?.with_timezone(&chrono::Utc);
        let day = crate::clock::local_day(at, self.time_zone());
        let dates = read_dates(question, day, self.locale().language());
        let terms = p.terms(&spec.object);
        let mut plan_terms = vec![];
        let mut filters = vec![];
        for c in &conditions {
            if let Some((key, _, _)) = terms.iter().find(|(_, _, tc)| tc == c) {
                plan_terms.push(Value::String(key.clone()));
                continue;
            }
            let (negated, cmp) = match c {
                Condition::Not(n) => match n.not.as_ref() {
                    Condition::Compare(cmp) if cmp.op == Op::In => (true, cmp),
                    _ => return None,
                },
                Condition::Compare(cmp) => (false, cmp),
                Condition::Related(_) => return None,
                Condition::All(all) => {
                    // A date range: both ends on one date field, as a phrase of the question.
                    let field = match all.all.first() {
                        Some(Condition::Compare(first)) => first.field.clone(),
                        _ => return None,
                    };
                    let (_, f) = p.field(&spec.object, &field)?;
                    let range = dates.iter().find(|r| {
                        let ends = date_conditions(&field, f.field_type, r, self.time_zone());
                        ends.len() == all.all.len() && ends == all.all
                    })?;
                    filters.push(json!({"field": field, "op": "during", "value": range.phrase}));
                    continue;
                }
                Condition::Any(_) => return None,
            };
            if cmp.other_field.is_some() {
                return None;
            }
            let (owner, f) = p.field(&spec.object, &cmp.field)?;
            if matches!(f.field_type, FieldType::Date | FieldType::Datetime) {
                let ends = [c.clone()];
                let range = dates
                    .iter()
                    .find(|r| date_conditions(&cmp.field, f.field_type, r, self.time_zone()) == ends)?;
                filters.push(json!({"field": cmp.field, "op": "during", "value": range.phrase}));
                continue;
            }
            let mut value = cmp.value.clone();
            // Records named by id (a lookup) or by name must be readable; written by name.
            let named = f.field_type == FieldType::Lookup || f.key == owner.name_field;
            if named {
                let list: Vec<Value> = match &value {
                    Some(Value::Array(a)) => a.clone(),
                    Some(v) => vec![v.clone()],
                    None => vec![],
                };
                let mut shown = vec![];
                for v in list {
                    let v = v.as_str()?;
                    if f.field_type == FieldType::Lookup {
                        let target = f.target.as_deref()?;
                        let record = self.get(target, v).ok()?;
                        let name_field = &p.object(target)?.name_field;
                        shown.push(record.fields.get(name_field)?.clone());
                    } else {
                        let r = self.resolve_name(&owner.key, &cmp.field, v).ok()?;
                        if r.status == ResolutionStatus::Unmatched {
                            return None;
                        }
                        shown.push(Value::String(v.to_string()));
                    }
                }
                value = Some(match (cmp.op, shown.len()) {
                    (Op::Eq, 1) => shown.remove(0),
                    _ => Value::Array(shown),
                });
                if !names {
                    value = cmp.value.clone();
                }
            }
            let op = match (negated, cmp.op) {
                (true, _) => "not_in",
                (false, op) => op.as_str(),
            };
            let mut filter = Map::new();
            filter.insert("field".into(), json!(cmp.field));
            filter.insert("op".into(), json!(op));
            if let Some(v) = value {
                filter.insert("value".into(), v);
            }
            filters.push(Value::Object(filter));
        }
        let mut sort = vec![];
        for s in &spec.sort {
            p.field(&spec.object, &s.field)?;
            sort.push(json!({"field": s.field, "direction": s.direction}));
        }
        let limit = match spec.limit {
            Some(n) if n != DEFAULT_LIMIT => json!(n),
            _ => Value::Null,
        };
        let mut plan = Map::new();
        plan.insert("object".into(), json!(object.key));
        plan.insert("terms".into(), Value::Array(plan_terms));
        plan.insert("filters".into(), Value::Array(filters));
        plan.insert("sort".into(), Value::Array(sort));
        plan.insert("limit".into(), limit);
        Some(Value::Object(plan).to_string())
    }
}

/// The learned examples as the model reads them: one question and its plan each.
pub(super) fn learned_text(learned: &[(LearnedUse, String)]) -> String {
    learned
        .iter()
        .map(|(u, plan)| format!("question: {}\nplan: {plan}", u.question))
        .collect::<Vec<_>>()
        .join("\n\n")
}
