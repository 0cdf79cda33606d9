//! Conversations: the user's own, stored with the steps each turn took, listed, read again
//! through the session, and deleted.

use super::*;

impl Session<'_> {
    /// What a step of `request` may name: the user's projection, the conversation's state, the
    /// screen, the objects a new record may be proposed for (named in the message, or on the
    /// screen, and creatable by the user).
    pub(super) fn assistant_scope(&self, conversation: Option<&str>, request: &TurnRequest) -> Result<Scope> {
        let state = match conversation {
            Some(id) => self.conversation_state(id)?,
            None => State::default(),
        };
        let projection = self.whole_grounding().projection.clone();
        let mut creatable: Vec<String> = self.objects_named(&request.text);
        if let Some(c) = &request.context {
            creatable.push(c.object.clone());
        }
        creatable.retain(|o| self.readable_object(o).is_ok_and(|(_, a)| a.create));
        let creatable = first_of_each(creatable);
        Ok(Scope {
            projection,
            state,
            context: request.context.clone(),
            has_document: request.document.is_some(),
            creatable,
            tools: self.tools_for(CAPABILITY)?,
        })
    }

    /// The JSON Schema the first step of `request` is held to at decode time (what the user
    /// may point at and change, as the conversation stands).
    pub fn assistant_action_schema(&self, request: &TurnRequest) -> Result<Value> {
        if let Some(id) = &request.conversation {
            self.conversation_owned(id)?;
        }
        Ok(self.assistant_scope(request.conversation.as_deref(), request)?.schema())
    }

    pub(super) fn start_conversation(&self, first: &str) -> Result<String> {
        let id = self.ws.ids.record_id("conversation");
        let now = timestamp(self.ws.clock.now());
        let title: String = first.chars().take(80).collect();
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO assistant_conversation (id, owner, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
            params![id, self.user().key, title, now],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// A conversation of this user (another's is absent, as if it did not exist).
    pub(super) fn conversation_owned(&self, id: &str) -> Result<ConversationSummary> {
        self.ws
            .conn()
            .query_row(
                "SELECT id, title, updated_at FROM assistant_conversation WHERE id = ?1 AND owner = ?2",
                params![id, self.user().key],
                |r| Ok(ConversationSummary { id: r.get(0)?, title: r.get(1)?, updated_at: r.get(2)? }),
            )
            .optional()?
            .ok_or_else(|| Error::new(Code::NotFound, format!("no conversation `{id}`")))
    }

    pub(super) fn add_message(
        &self,
        conversation: &str,
        role: &str,
        text: &str,
        steps: &[TurnStep],
        correlation: Option<&str>,
    ) -> Result<()> {
        let now = timestamp(self.ws.clock.now());
        let steps = serde_json::to_string(steps).map_err(|e| Error::internal(e.to_string()))?;
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO assistant_message (conversation_id, seq, role, text, steps, correlation_id, created_at)
             VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM assistant_message WHERE conversation_id = ?1), ?2, ?3, ?4, ?5, ?6)",
            params![conversation, role, text, steps, correlation, now],
        )?;
        touch(&tx, conversation, &now)?;
        tx.commit()?;
        Ok(())
    }

    pub(super) fn messages(&self, conversation: &str) -> Result<Vec<Message>> {
        let mut stmt = self.ws.conn().prepare(
            "SELECT seq, role, text, steps, correlation_id, created_at FROM assistant_message WHERE conversation_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([conversation], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })?;
        let mut out = vec![];
        for row in rows {
            let (seq, role, text, steps, correlation_id, created_at) = row?;
            let steps: Vec<TurnStep> = serde_json::from_str(&steps).unwrap_or_default();
            out.push(Message { seq, role, text, steps, correlation_id, created_at });
        }
        Ok(out)
    }

    pub(super) fn conversation_state(&self, conversation: &str) -> Result<State> {
        self.conversation_state_before(conversation, i64::MAX)
    }

    /// The state of the conversation as its messages before `seq` left it.
    pub(super) fn conversation_state_before(&self, conversation: &str, seq: i64) -> Result<State> {
        let mut state = State::default();
        for m in self.messages(conversation)?.into_iter().filter(|m| m.seq < seq) {
            if m.role == "user" {
                state.history.push(format!("person: {}", m.text));
            }
            for step in &m.steps {
                state.apply(step);
            }
        }
        Ok(state)
    }

    /// The conversation's last turn if it paused on a tool call waiting for a person: the
    /// assistant's message, the person's message it answers, and the steps taken.
    pub(super) fn paused_turn(&self, conversation: &str) -> Result<PausedTurn> {
        let messages = self.messages(conversation)?;
        let not_paused =
            || Error::new(Code::Conflict, "the conversation's last turn is not waiting for a tool call");
        let last = messages.last().filter(|m| m.role == "assistant").ok_or_else(not_paused)?;
        let waits = last.steps.last().is_some_and(|s| {
            matches!(&s.outcome, StepOutcome::Tool { call: Some(_), output: None, fault: None, .. })
        });
        if !waits {
            return Err(not_paused());
        }
        let text =
            messages.iter().rev().find(|m| m.role == "user" && m.seq < last.seq).map(|m| m.text.clone());
        Ok(PausedTurn {
            seq: last.seq,
            text: text.ok_or_else(not_paused)?,
            correlation: last.correlation_id.clone().ok_or_else(not_paused)?,
            steps: last.steps.clone(),
        })
    }

    pub(super) fn update_message(
        &self,
        conversation: &str,
        seq: i64,
        text: &str,
        steps: &[TurnStep],
    ) -> Result<()> {
        let now = timestamp(self.ws.clock.now());
        let steps = serde_json::to_string(steps).map_err(|e| Error::internal(e.to_string()))?;
        let tx = self.begin_write()?;
        tx.execute(
            "UPDATE assistant_message SET text = ?3, steps = ?4 WHERE conversation_id = ?1 AND seq = ?2",
            params![conversation, seq, text, steps],
        )?;
        touch(&tx, conversation, &now)?;
        tx.commit()?;
        Ok(())
    }

    /// This user's conversations, newest first.
    pub fn conversations(&self) -> Result<Vec<ConversationSummary>> {
        let mut stmt = self.ws.conn().prepare(
            "SELECT id, title, updated_at FROM assistant_conversation WHERE owner = ?1 ORDER BY updated_at DESC, id DESC",
        )?;
        let rows = stmt.query_map([&self.user().key], |r| {
            Ok(ConversationSummary { id: r.get(0)?, title: r.get(1)?, updated_at: r.get(2)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One conversation of this user, its tables' rows read again through this session.
    pub fn conversation(&self, id: &str) -> Result<Conversation> {
        let summary = self.conversation_owned(id)?;
        let created_at: String = self.ws.conn().query_row(
            "SELECT created_at FROM assistant_conversation WHERE id = ?1",
            [id],
            |r| r.get(0),
        )?;
        let mut messages = self.messages(id)?;
        for step in messages.iter_mut().flat_map(|m| m.steps.iter_mut()) {
            if let StepOutcome::Table { set, rows } = &mut step.outcome {
                *rows = self.query(&set.spec).ok().map(Box::new);
            }
        }
        Ok(Conversation {
            id: summary.id,
            title: summary.title,
            created_at,
            updated_at: summary.updated_at,
            messages,
        })
    }

    /// The person changed a result set's spec (its chips): the spec runs through this session
    /// and the set keeps the new spec and ids, so what the conversation points at ("the
    /// largest one") is what the person sees. The object stays; a spec the projection refuses
    /// changes nothing.
    pub fn revise_result_set(&self, conversation: &str, set: &str, spec: &QuerySpec) -> Result<Conversation> {
        self.conversation_owned(conversation)?;
        let found = self.messages(conversation)?.into_iter().find_map(|m| {
            let i = m.steps.iter().position(
                |step| matches!(&step.outcome, StepOutcome::Table { set: s, .. } if s.name == set),
            )?;
            Some((m, i))
        });
        let Some((mut message, i)) = found else {
            return Err(Error::new(Code::NotFound, format!("no result set `{set}` in this conversation")));
        };
        let StepOutcome::Table { set: kept, .. } = &mut message.steps[i].outcome else {
            return Err(Error::internal("a result set's step is not a table"));
        };
        if spec.object != kept.object {
            return Err(Error::new(
                Code::InvalidValue,
                format!("`{}` holds {} records; a changed spec keeps its object", kept.name, kept.object),
            )
            .with_field("object"));
        }
        let result = self.query(spec)?;
        kept.spec = spec.clone();
        kept.ids = ask::ids(&result);
        kept.revised = true;
        let steps = serde_json::to_string(&message.steps).map_err(|e| Error::internal(e.to_string()))?;
        let tx = self.begin_write()?;
        tx.execute(
            "UPDATE assistant_message SET steps = ?3 WHERE conversation_id = ?1 AND seq = ?2",
            params![conversation, message.seq, steps],
        )?;
        touch(&tx, conversation, &timestamp(self.ws.clock.now()))?;
        tx.commit()?;
        tracing::info!(records = result.records.len(), "a result set was revised");
        self.conversation(conversation)
    }

    /// Delete one of this user's conversations (its proposals and traces stay).
    pub fn delete_conversation(&self, id: &str) -> Result<()> {
        self.conversation_owned(id)?;
        let tx = self.begin_write()?;
        tx.execute("DELETE FROM assistant_message WHERE conversation_id = ?1", [id])?;
        tx.execute("DELETE FROM assistant_conversation WHERE id = ?1", [id])?;
        tx.commit()?;
        tracing::info!("a conversation was deleted");
        Ok(())
    }
}

/// A turn paused on a tool call waiting for a person.
pub(super) struct PausedTurn {
    pub(super) seq: i64,
    pub(super) text: String,
    pub(super) correlation: String,
    pub(super) steps: Vec<TurnStep>,
}

/// A conversation changed now (listed first).
fn touch(tx: &rusqlite::Transaction<'_>, conversation: &str, now: &str) -> Result<()> {
    tx.execute(
        "UPDATE assistant_conversation SET updated_at = ?2 WHERE id = ?1",
        params![conversation, now],
    )?;
    Ok(())
}
