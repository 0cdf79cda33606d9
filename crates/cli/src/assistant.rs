//! The assistant from the command line: `assist say MESSAGE` takes one turn of a conversation
//! (a new one, or `--conversation ID`), `assist revise` changes a result set's spec as the app's
//! chips do, and `assist list|show|delete` manage the acting user's conversations.

use crate::output::to_json;
use clap::Subcommand;
use countersign_kernel::ai::assistant::{self, ScreenContext, TurnRequest};
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::{Result, Session};
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum AssistCommand {
    /// One turn: the message, the steps the assistant took and their results.
    Say {
        message: String,
        /// Go on with this conversation (default: a new one).
        #[arg(long)]
        conversation: Option<String>,
        /// What is on screen: OBJECT (a list) or OBJECT/ID (a record).
        #[arg(long)]
        on: Option<String>,
        /// A document for the assistant to extract (text, Markdown, HTML, .eml, PDF, DOCX).
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// Your conversations, newest first.
    List,
    /// One conversation with its messages and steps (tables read again now).
    Show {
        id: String,
    },
    /// Change a result set's query spec (what the conversation then points at).
    Revise {
        conversation: String,
        /// The set's name: R1, R2…
        set: String,
        /// The new query spec (JSON text, or @FILE); its object stays the set's.
        spec: String,
    },
    Delete {
        id: String,
    },
}

pub fn run(session: &Session<'_>, command: AssistCommand) -> Result<Value> {
    match command {
        AssistCommand::Say { message, conversation, on, file } => {
            let context = on.map(|on| match on.split_once('/') {
                Some((object, id)) => ScreenContext { object: object.into(), id: Some(id.into()) },
                None => ScreenContext { object: on, id: None },
            });
            let document =
                file.map(|f| countersign_kernel::ingest::read_file(&f, &Default::default())).transpose()?;
            let request = TurnRequest { conversation, text: message, context, document };
            let turn = crate::ai::runtime()?.block_on(assistant::take_turn(
                session,
                request,
                &Cancel::default(),
                &mut |_| {},
            ))?;
            to_json(&turn)
        }
        AssistCommand::List => Ok(json!({ "conversations": to_json(&session.conversations()?)? })),
        AssistCommand::Show { id } => to_json(&session.conversation(&id)?),
        AssistCommand::Revise { conversation, set, spec } => {
            to_json(&session.revise_result_set(&conversation, &set, &crate::records::parse_spec(&spec)?)?)
        }
        AssistCommand::Delete { id } => {
            session.delete_conversation(&id)?;
            Ok(json!({ "deleted": id }))
        }
    }
}
