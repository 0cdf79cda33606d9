//! The AI capabilities run from the window — Ask, Extract, Summarize and the assistant — with
//! their progress channels and cancellation, and the examples learned from corrections.

use super::*;

/// Ask: the pipeline's synchronous steps run on the session; the model is awaited with no
/// lock on the workspace held, and progress streams to the UI over `progress`.
#[tauri::command]
pub async fn ask(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    question: String,
    progress: Channel<AskProgress>,
) -> Result<AskAnswer> {
    let running = calls.begin(&call)?;
    run_capability(&desk, &mut Ask { question }, &running.cancel, &progress, false).await
}

/// A file dropped on the assistant: its name and bytes.
#[derive(serde::Deserialize)]
pub struct DroppedFile {
    name: String,
    bytes: Vec<u8>,
}

/// One turn of the assistant as the acting user (with a dropped document to extract, if any):
/// each step's progress over `progress`; `cancel_model_call(call)` stops the model call running.
#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn assistant_turn(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    conversation: Option<String>,
    text: String,
    context: Option<assistant::ScreenContext>,
    document: Option<DroppedFile>,
    progress: Channel<assistant::TurnProgress>,
) -> Result<assistant::Turn> {
    let running = calls.begin(&call)?;
    let document = match document {
        Some(f) => Some(read_dropped(f.name, f.bytes).await?),
        None => None,
    };
    let request = assistant::TurnRequest { conversation, text, context, document };
    assistant::take_turn(&UserDesk::current(&desk)?, request, &running.cancel, &mut |p| {
        let _ = progress.send(p);
    })
    .await
}

/// Go on with a turn that paused on a tool call, once a person decided it.
#[tauri::command]
pub async fn resume_assistant_turn(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    conversation: String,
    progress: Channel<assistant::TurnProgress>,
) -> Result<assistant::Turn> {
    let running = calls.begin(&call)?;
    assistant::resume_turn(&UserDesk::current(&desk)?, &conversation, &running.cancel, &mut |p| {
        let _ = progress.send(p);
    })
    .await
}

/// The acting user's conversations with the assistant, newest first.
#[tauri::command]
pub async fn conversations(desk: State<'_, Desk>) -> Result<Vec<assistant::ConversationSummary>> {
    desk.session(|s| s.conversations())
}

/// One of the acting user's conversations, its tables read again through their session.
#[tauri::command]
pub async fn conversation(desk: State<'_, Desk>, id: String) -> Result<assistant::Conversation> {
    desk.session(|s| s.conversation(&id))
}

#[tauri::command]
pub async fn revise_result_set(
    desk: State<'_, Desk>,
    conversation: String,
    set: String,
    spec: QuerySpec,
) -> Result<assistant::Conversation> {
    desk.session(|s| s.revise_result_set(&conversation, &set, &spec))
}

#[tauri::command]
pub async fn delete_conversation(desk: State<'_, Desk>, id: String) -> Result<()> {
    desk.session(|s| s.delete_conversation(&id))
}

#[tauri::command]
pub async fn cancel_model_call(calls: State<'_, ModelCalls>, call: String) -> Result<()> {
    calls.token(&call)?.cancel();
    Ok(())
}

/// Extract a document (its bytes, read by the UI from a file the user dropped or picked) into
/// a proposal for `object` (or an update of `record`). Reading the document runs off the async
/// runtime; the model is awaited with no lock on the workspace held.
#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn extract(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    name: String,
    bytes: Vec<u8>,
    object: String,
    record: Option<String>,
    progress: Channel<AskProgress>,
) -> Result<ExtractAnswer> {
    let running = calls.begin(&call)?;
    let document = read_dropped(name, bytes).await?;
    run_capability(&desk, &mut Extract { document, object, record }, &running.cancel, &progress, false).await
}

/// A dropped file read into a document (in the reader's own process), off the async threads.
pub(super) async fn read_dropped(name: String, bytes: Vec<u8>) -> Result<ingest::Document> {
    tauri::async_runtime::spawn_blocking(move || ingest::ingest(&name, bytes, &Default::default()))
        .await
        .map_err(|e| Error::internal(format!("reading the document stopped: {e}")))?
}

/// Summarize a record: the answer streams to the UI as the model writes it (a draft), and the
/// kernel's checked answer, with its citations, is what this returns.
#[tauri::command]
pub async fn summarize(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    object: String,
    id: String,
    progress: Channel<AskProgress>,
) -> Result<SummaryAnswer> {
    let running = calls.begin(&call)?;
    run_capability(&desk, &mut Summarize::new(&object, &id), &running.cancel, &progress, true).await
}

/// Keep the user's correction of an answer (the spec they ran or saved after editing it);
/// `None` when the spec is the one the answer ran.
#[tauri::command]
pub async fn learn_from_correction(
    desk: State<'_, Desk>,
    trace_id: String,
    spec: QuerySpec,
) -> Result<Option<LearnedExample>> {
    desk.session(|s| s.ask_learn(&trace_id, &spec))
}

#[tauri::command]
pub async fn learned_examples(desk: State<'_, Desk>) -> Result<Vec<LearnedExample>> {
    desk.session(|s| s.learned_examples())
}

#[tauri::command]
pub async fn forget_example(desk: State<'_, Desk>, id: String) -> Result<()> {
    desk.session(|s| s.forget_example(&id))
}
