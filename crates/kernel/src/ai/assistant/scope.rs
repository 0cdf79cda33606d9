//! What a step may choose: the conversation's state (result sets, the focus record), the
//! actions and what they point at, and the per-request JSON Schema (`Scope`) that closes them at
//! decode time.

use super::*;

/// What a conversation can point at: its result sets and its focus record.
#[derive(Debug, Clone, Default)]
pub(super) struct State {
    pub(super) sets: Vec<ResultSet>,
    pub(super) focus: Option<RecordRef>,
    /// Earlier turns, compactly, newest last.
    pub(super) history: Vec<String>,
}

impl State {
    pub(super) fn apply(&mut self, step: &TurnStep) {
        match &step.outcome {
            StepOutcome::Table { set, .. } => self.sets.push(set.as_ref().clone()),
            StepOutcome::Summary { record, .. } | StepOutcome::Record { record, .. } => {
                self.focus = Some(record.clone())
            }
            StepOutcome::Proposal { record: Some(record), .. }
            | StepOutcome::Failed { record: Some(record), .. } => self.focus = Some(record.clone()),
            _ => {}
        }
        self.history.push(format!("  → {}", describe(&step.outcome)));
    }
}

/// How much of a failed step's reason the model reads of it.
const FAILURE_SHOWN: usize = 200;

/// A step's outcome in a line (what the model reads of earlier steps).
pub(super) fn describe(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::Table { set, .. } => {
            let revised = if set.revised { " (the person has since changed its filters)" } else { "" };
            format!(
                "{} = {} {} record(s), for \"{}\"{revised}",
                set.name,
                set.ids.len(),
                set.object,
                set.question
            )
        }
        StepOutcome::Summary { record, .. } => {
            format!("summarized {} {} ({})", record.object, record.name, record.id)
        }
        StepOutcome::Record { record, .. } => {
            format!("read {} {} ({})", record.object, record.name, record.id)
        }
        StepOutcome::Notes { hits } => {
            format!("searched the notes: {} hit(s)", hits.as_array().map_or(0, Vec::len))
        }
        StepOutcome::Proposal { object, record, .. } => match record {
            Some(r) => format!("proposed an update of {} {} ({})", r.object, r.name, r.id),
            None => format!("proposed a new {object}"),
        },
        StepOutcome::Tool { tool, call, output, fault } => match (output, fault) {
            (Some(out), _) => {
                let text = match out {
                    Value::String(t) => t.clone(),
                    other => other.to_string(),
                };
                format!(
                    "used the tool {tool}; it answered: {}",
                    crate::ai::tools::calls::cut(&text, TOOL_OUTPUT_SHOWN)
                )
            }
            (None, Some(f)) => format!("the tool {tool} did not run or failed: {} ({})", f.code, f.message),
            (None, None) if call.is_some() => format!("the tool {tool} waits for a person's approval"),
            (None, None) => format!("the tool {tool} was not called"),
        },
        StepOutcome::Reply { .. } => "replied".into(),
        // The reason, cut: a checker's every finding would crowd out the rest of the prompt.
        StepOutcome::Failed { error, record } => {
            let on = record
                .as_ref()
                .map(|r| format!(" on {} {} ({})", r.object, r.name, r.id))
                .unwrap_or_default();
            format!("failed{on}: {}", crate::ai::tools::calls::cut(&error.message, FAILURE_SHOWN))
        }
    }
}

/// The action a step chose, as parsed from the model's JSON (after the schema).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum Action {
    Ask { question: String, then: Then },
    Read { record: Pointer, then: Then },
    Summarize { record: Pointer },
    SearchNotes { text: String, then: Then },
    ProposeUpdate { object: String, record: Pointer, changes: Map<String, Value> },
    ProposeCreate { object: String, values: Map<String, Value> },
    Extract { object: String },
    UseTool { tool: String, input: Map<String, Value> },
    Reply { text: String },
}

/// Whether the turn ends with this step: a tool's answer is the answer (shown as the tool gave
/// it, never restated by the model), a call waiting for a person pauses the turn, a tool that
/// did not run or failed goes back to the model; otherwise the action's own `then`.
pub(super) fn ends_turn(action: &Action, outcome: &StepOutcome) -> bool {
    match outcome {
        StepOutcome::Failed { .. } | StepOutcome::Reply { .. } => true,
        StepOutcome::Tool { fault: Some(_), .. } => false,
        StepOutcome::Tool { .. } => true,
        _ => action.then() == Then::Done,
    }
}

/// How much of a tool's output the model reads again in later steps (characters).
pub(super) const TOOL_OUTPUT_SHOWN: usize = 4000;

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Then {
    Done,
    Continue,
}

impl Action {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Action::Ask { .. } => "ask",
            Action::Read { .. } => "read",
            Action::Summarize { .. } => "summarize",
            Action::SearchNotes { .. } => "search_notes",
            Action::ProposeUpdate { .. } => "propose_update",
            Action::ProposeCreate { .. } => "propose_create",
            Action::Extract { .. } => "extract",
            Action::UseTool { .. } => "use_tool",
            Action::Reply { .. } => "reply",
        }
    }

    /// What makes two actions the same: an ask's question (up to its question mark, in any
    /// case), else the whole action but its `then`.
    pub(super) fn signature(&self, value: &Value) -> String {
        match self {
            Action::Ask { question, .. } => format!("ask:{}", question_of(question).to_lowercase()),
            _ => {
                let mut v = value.clone();
                if let Some(m) = v.as_object_mut() {
                    m.remove("then");
                }
                v.to_string()
            }
        }
    }

    /// Whether the turn goes on after this action: only after one that finds something to
    /// act on (an ask, a search, a read) and says so — or after a tool call that did not run
    /// or failed (`ends_turn`), so the model may say why. A tool's answer is shown as it came. A summary, a proposal, an extraction or a
    /// reply answers the message (a small model says "continue" after anything; a write done
    /// twice would be two proposals).
    pub(super) fn then(&self) -> Then {
        match self {
            Action::Ask { then, .. } | Action::Read { then, .. } | Action::SearchNotes { then, .. } => *then,
            Action::Summarize { .. }
            | Action::ProposeUpdate { .. }
            | Action::ProposeCreate { .. }
            | Action::Extract { .. }
            | Action::UseTool { .. }
            | Action::Reply { .. } => Then::Done,
        }
    }
}

/// How a step points at one record.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub(super) enum Pointer {
    Pick {
        set: String,
        pick: Pick,
        #[serde(default)]
        by: Option<String>,
    },
    Focus {
        focus: bool,
    },
    Id {
        id: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Pick {
    Largest,
    Smallest,
    Oldest,
    Newest,
    First,
    Last,
}

/// The picks that rank a set by a field, in pairs that rank by one kind of field, with the
/// names the schema and the model give them.
pub(super) const RANKINGS: [[(Pick, &str); 2]; 2] = [
    [(Pick::Largest, "largest"), (Pick::Smallest, "smallest")],
    [(Pick::Oldest, "oldest"), (Pick::Newest, "newest")],
];

impl Pick {
    /// The kinds of field this pick ranks by (none: it takes the set's order).
    pub(super) fn ranks_by(self) -> &'static [FieldType] {
        match self {
            Pick::Largest | Pick::Smallest => &[FieldType::Number, FieldType::Currency],
            Pick::Oldest | Pick::Newest => &[FieldType::Date, FieldType::Datetime],
            Pick::First | Pick::Last => &[],
        }
    }
}

/// What a step may name, for its schema and its checks.
pub(super) struct Scope {
    pub(super) projection: Projection,
    pub(super) state: State,
    pub(super) context: Option<ScreenContext>,
    pub(super) has_document: bool,
    /// Objects a new record may be proposed for (named in the message, or on the screen).
    pub(super) creatable: Vec<String>,
    /// Tools from outside the assistant may call: allowed to it and not blocked.
    pub(super) tools: Vec<crate::ai::tools::registry::ToolInfo>,
}

impl Scope {
    /// Record ids there are to point at by id (the screen's record, the focus), with objects.
    pub(super) fn known_ids(&self) -> Vec<(String, String)> {
        let mut out = vec![];
        if let Some(ScreenContext { object, id: Some(id) }) = &self.context {
            out.push((object.clone(), id.clone()));
        }
        if let Some(f) = &self.state.focus {
            out.push((f.object.clone(), f.id.clone()));
        }
        out.dedup();
        out
    }

    /// Objects an update may be for: those of the result sets, the focus and the screen.
    pub(super) fn pointable_objects(&self) -> Vec<String> {
        let mut out: Vec<String> = self.state.sets.iter().map(|s| s.object.clone()).collect();
        out.extend(self.known_ids().into_iter().map(|(o, _)| o));
        out.retain(|o| self.projection.object(o).is_some());
        first_of_each(out)
    }

    /// Fields of `object` a pick ranks by: amounts and numbers for the largest or smallest,
    /// dates for the oldest or newest.
    pub(super) fn rank_fields(&self, object: &str, pick: Pick) -> Vec<String> {
        self.projection.object(object).map_or(vec![], |o| {
            o.fields
                .iter()
                .filter(|f| pick.ranks_by().contains(&f.field_type))
                .map(|f| f.key.clone())
                .collect()
        })
    }

    /// The schema of a pointer at a record of `object` (any object: `None`).
    pub(super) fn pointer_schema(&self, object: Option<&str>) -> Option<Value> {
        let mut branches = vec![];
        for set in self.state.sets.iter().filter(|s| object.is_none_or(|o| o == s.object)) {
            branches.push(json!({"type": "object", "properties": {"set": {"const": set.name}, "pick": {"enum": ["first", "last"]}},
                "required": ["set", "pick"], "additionalProperties": false}));
            for [(pick, one), (_, other)] in RANKINGS {
                let by = self.rank_fields(&set.object, pick);
                if !by.is_empty() {
                    branches.push(json!({"type": "object", "properties": {"set": {"const": set.name}, "pick": {"enum": [one, other]}, "by": {"enum": by}},
                        "required": ["set", "pick", "by"], "additionalProperties": false}));
                }
            }
        }
        if self.state.focus.as_ref().is_some_and(|f| object.is_none_or(|o| o == f.object)) {
            branches.push(json!({"type": "object", "properties": {"focus": {"const": true}}, "required": ["focus"], "additionalProperties": false}));
        }
        let ids: Vec<String> = self
            .known_ids()
            .into_iter()
            .filter(|(o, _)| object.is_none_or(|w| w == o))
            .map(|(_, id)| id)
            .collect();
        if !ids.is_empty() {
            branches.push(json!({"type": "object", "properties": {"id": {"enum": ids}}, "required": ["id"], "additionalProperties": false}));
        }
        match branches.len() {
            0 => None,
            1 => branches.pop(),
            _ => Some(json!({"anyOf": branches})),
        }
    }

    /// The schema of the values a proposal may set on `object`: the fields the user may edit,
    /// each by its type (a picklist's active values as an enum).
    pub(super) fn values_schema(&self, object: &str) -> Option<Value> {
        let o = self.projection.object(object)?;
        let mut properties = Map::new();
        for f in o.fields.iter().filter(|f| f.access == FieldLevel::Edit) {
            let active: Vec<String> = f.values.iter().map(|(v, _)| v.clone()).collect();
            let schema = crate::ai::contract::value_schema(f.field_type, &active, 500);
            properties.insert(f.key.clone(), schema);
        }
        (!properties.is_empty()).then(|| {
            json!({"type": "object", "properties": properties, "additionalProperties": false, "minProperties": 1})
        })
    }

    /// The action schema of this step.
    pub(super) fn schema(&self) -> Value {
        let then = json!({"enum": ["done", "continue"]});
        let branch = |properties: Value, required: &[&str]| json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
        let mut branches = vec![
            branch(
                json!({"action": {"const": "ask"}, "question": {"type": "string", "minLength": 3, "maxLength": 300}, "then": then}),
                &["action", "question", "then"],
            ),
            branch(
                json!({"action": {"const": "search_notes"}, "text": {"type": "string", "minLength": 2, "maxLength": 200}, "then": then}),
                &["action", "text", "then"],
            ),
        ];
        if let Some(pointer) = self.pointer_schema(None) {
            branches.push(branch(
                json!({"action": {"const": "read"}, "record": pointer, "then": then}),
                &["action", "record", "then"],
            ));
            branches.push(branch(
                json!({"action": {"const": "summarize"}, "record": pointer}),
                &["action", "record"],
            ));
        }
        for object in self.pointable_objects() {
            if let (Some(pointer), Some(values)) =
                (self.pointer_schema(Some(&object)), self.values_schema(&object))
            {
                branches.push(branch(
                    json!({"action": {"const": "propose_update"}, "object": {"const": object}, "record": pointer, "changes": values}),
                    &["action", "object", "record", "changes"],
                ));
            }
        }
        for object in &self.creatable {
            if let Some(values) = self.values_schema(object) {
                branches.push(branch(
                    json!({"action": {"const": "propose_create"}, "object": {"const": object}, "values": values}),
                    &["action", "object", "values"],
                ));
            }
        }
        if self.has_document && !self.creatable.is_empty() {
            branches.push(branch(
                json!({"action": {"const": "extract"}, "object": {"enum": self.creatable}}),
                &["action", "object"],
            ));
        }
        for tool in &self.tools {
            let mut input = tool.input_schema.clone();
            if let Some(o) = input.as_object_mut() {
                o.entry("properties").or_insert_with(|| json!({}));
                o["properties"]["_rationale"] = json!({"type": "string", "minLength": 3, "maxLength": 300});
                let required = o.entry("required").or_insert_with(|| json!([]));
                if let Some(r) = required.as_array_mut() {
                    r.push(json!("_rationale"));
                }
            }
            branches.push(branch(
                json!({"action": {"const": "use_tool"}, "tool": {"const": tool.name}, "input": input}),
                &["action", "tool", "input"],
            ));
        }
        branches.push(branch(
            json!({"action": {"const": "reply"}, "text": {"type": "string", "minLength": 1, "maxLength": 400}}),
            &["action", "text"],
        ));
        json!({"anyOf": branches})
    }

    /// What the model reads besides the message: the conversation, what it can point at, and
    /// the fields it may change.
    pub(super) fn describe(&self, steps: &[TurnStep]) -> String {
        let mut lines = vec![];
        if !self.state.history.is_empty() {
            lines.push("Conversation so far:".to_string());
            let start = self.state.history.len().saturating_sub(12);
            lines.extend(self.state.history[start..].iter().cloned());
        }
        if !steps.is_empty() {
            lines.push("Steps taken for this message:".into());
            lines.extend(steps.iter().map(|s| format!("  → {}", describe(&s.outcome))));
        }
        for set in &self.state.sets {
            let mut line = format!(
                "Result set {}: {} {} record(s) for \"{}\"",
                set.name,
                set.ids.len(),
                set.object,
                set.question
            );
            for [(pick, one), (_, other)] in RANKINGS {
                let by = self.rank_fields(&set.object, pick);
                if !by.is_empty() {
                    line.push_str(&format!("; {one} or {other} by: {}", by.join(", ")));
                }
            }
            lines.push(line);
        }
        if let Some(f) = &self.state.focus {
            lines.push(format!("The conversation is about: {} {} (id {})", f.object, f.name, f.id));
        }
        match &self.context {
            Some(ScreenContext { object, id: Some(id) }) => {
                lines.push(format!("On screen: the {object} record with id {id}"))
            }
            Some(ScreenContext { object, id: None }) => {
                lines.push(format!("On screen: the list of {object}"))
            }
            None => {}
        }
        for object in self.pointable_objects().iter().chain(&self.creatable) {
            let Some(o) = self.projection.object(object) else { continue };
            let editable: Vec<String> = o
                .fields
                .iter()
                .filter(|f| f.access == FieldLevel::Edit)
                .map(|f| match f.field_type {
                    FieldType::Picklist => format!(
                        "{} ({})",
                        f.key,
                        f.values.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    t => format!("{} ({})", f.key, t.key()),
                })
                .collect();
            if !editable.is_empty() {
                lines.push(format!("Fields of {object} you may change: {}", editable.join("; ")));
            }
        }
        if self.has_document {
            lines.push("A document is attached.".into());
        }
        for tool in &self.tools {
            let asks = tool
                .definition
                .as_ref()
                .is_some_and(|d| d.policy == crate::ai::tools::definition::Policy::Ask);
            let effect = match tool.effect {
                crate::ai::tools::definition::Effect::ChangesOutside => "changes something outside",
                _ => "reads something outside",
            };
            let approval = if asks { "; a person approves each call first" } else { "" };
            lines.push(format!(
                "Tool {} ({effect}{approval}): {}",
                tool.name,
                crate::ai::tools::calls::cut(&tool.description, 300)
            ));
        }
        lines.join("\n")
    }

    /// Resolve a pointer to one record the user can read.
    pub(super) fn resolve(
        &self,
        session: &Session<'_>,
        pointer: &Pointer,
    ) -> std::result::Result<RecordRef, String> {
        let (object, id) = match pointer {
            Pointer::Focus { focus } => {
                let f = self
                    .state
                    .focus
                    .as_ref()
                    .filter(|_| *focus)
                    .ok_or("there is no record the conversation is about")?;
                (f.object.clone(), f.id.clone())
            }
            Pointer::Id { id } => {
                let (object, id) = self
                    .known_ids()
                    .into_iter()
                    .find(|(_, k)| k == id)
                    .ok_or_else(|| format!("`{id}` is not an id listed to you"))?;
                (object, id)
            }
            Pointer::Pick { set, pick, by } => {
                let set = self
                    .state
                    .sets
                    .iter()
                    .find(|s| &s.name == set)
                    .ok_or_else(|| format!("there is no result set {set}"))?;
                if set.ids.is_empty() {
                    return Err(format!("{} has no records", set.name));
                }
                let id = match (pick, by) {
                    (Pick::First, _) => set.ids[0].clone(),
                    (Pick::Last, _) => set.ids[set.ids.len() - 1].clone(),
                    (_, None) => return Err("say which field to rank by (\"by\")".into()),
                    (_, Some(field)) => {
                        if !self.rank_fields(&set.object, *pick).contains(field) {
                            return Err(format!("{} cannot be ranked by `{field}` for {pick:?}", set.object));
                        }
                        let largest = matches!(pick, Pick::Largest | Pick::Newest);
                        ranked(session, set, field, largest).map_err(|e| e.message)?
                    }
                };
                (set.object.clone(), id)
            }
        };
        let read = crate::ai::tools::run_tool(
            session,
            &crate::ai::tools::ToolCall::ReadRecord { object: object.clone(), id: id.clone() },
        )
        .map_err(|f| f.message)?;
        let name = read["name"].as_str().unwrap_or(&id).to_string();
        Ok(RecordRef { object, id, name })
    }

    /// The checks beyond the schema; `Err` is the exact problem, for the repair.
    pub(super) fn check(
        &self,
        session: &Session<'_>,
        action: &Action,
    ) -> std::result::Result<Option<RecordRef>, String> {
        match action {
            Action::Read { record, .. } | Action::Summarize { record, .. } => {
                self.resolve(session, record).map(Some)
            }
            Action::ProposeUpdate { object, record, changes, .. } => {
                let target = self.resolve(session, record)?;
                if &target.object != object {
                    return Err(format!("the record pointed at is a {}, not a {object}", target.object));
                }
                if changes.is_empty() {
                    return Err("give at least one change".into());
                }
                Ok(Some(target))
            }
            Action::Extract { .. } if !self.has_document => Err("no document is attached".into()),
            _ => Ok(None),
        }
    }
}

/// The record of `set` with the largest (or smallest) `field`, each read through the session
/// (a record no longer readable is passed over; one without the value never wins).
pub(super) fn ranked(session: &Session<'_>, set: &ResultSet, field: &str, largest: bool) -> Result<String> {
    let mut best: Option<(Value, String)> = None;
    for id in &set.ids {
        let Ok(record) = session.get(&set.object, id) else { continue };
        let Some(value) = record.fields.get(field).filter(|v| !v.is_null()).cloned() else { continue };
        let better = best.as_ref().is_none_or(|(b, _)| {
            let order = match (value.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => value.as_str().unwrap_or_default().cmp(b.as_str().unwrap_or_default()),
            };
            if largest {
                order.is_gt()
            } else {
                order.is_lt()
            }
        });
        if better {
            best = Some((value, id.clone()));
        }
    }
    best.map(|(_, id)| id)
        .ok_or_else(|| Error::new(Code::NotFound, format!("no record of {} has a {field}", set.name)))
}
