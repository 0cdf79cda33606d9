//! Records: objects described, queries and list views, one record read and saved, its
//! history, CSV in and out, and the vocabulary (terms) of each object.

use super::*;

#[tauri::command]
pub async fn describe_object(desk: State<'_, Desk>, object: String) -> Result<ObjectView> {
    desk.session(|s| s.describe_object(&object))
}

#[tauri::command]
pub async fn query_records(desk: State<'_, Desk>, spec: QuerySpec) -> Result<QueryResult> {
    desk.session(|s| s.query(&spec))
}

/// How many records a list holds (exact unfiltered; filtered, capped unless `exact`).
#[tauri::command]
pub async fn count_records(desk: State<'_, Desk>, spec: QuerySpec, exact: bool) -> Result<RecordCount> {
    desk.session(|s| s.count_records(&spec, exact))
}

/// Where a page starts for a scroll position far down a list.
#[tauri::command]
pub async fn cursor_at(desk: State<'_, Desk>, spec: QuerySpec, position: u64) -> Result<Option<Cursor>> {
    desk.session(|s| s.cursor_at(&spec, position))
}

/// The position of the first row reaching sort values (a jump to them).
#[tauri::command]
pub async fn position_of(
    desk: State<'_, Desk>,
    spec: QuerySpec,
    values: Vec<serde_json::Value>,
) -> Result<u64> {
    desk.session(|s| s.position_of(&spec, &values))
}

/// The indexes made for the sorts and filters people use (needs metadata.deploy).
#[tauri::command]
pub async fn use_indexes(desk: State<'_, Desk>) -> Result<Vec<UseIndex>> {
    desk.with(|open| open.ws.use_indexes(&open.user))
}

/// Pin or unpin one of them, or drop it now.
#[tauri::command]
pub async fn change_use_index(
    desk: State<'_, Desk>,
    name: String,
    pin: Option<bool>,
) -> Result<Option<UseIndex>> {
    let change = match pin {
        Some(p) => UseIndexChange::Pin(p),
        None => UseIndexChange::Drop,
    };
    desk.with(|open| open.ws.change_use_index(&open.user, &name, change))
}

#[tauri::command]
pub async fn get_record(desk: State<'_, Desk>, object: String, id: String) -> Result<Record> {
    desk.session(|s| s.get(&object, &id))
}

#[tauri::command]
pub async fn save_record(desk: State<'_, Desk>, request: SaveRequest) -> Result<SaveOutcome> {
    desk.session(|s| s.save(request, &SaveContext::default()))
}

#[tauri::command]
pub async fn record_history(desk: State<'_, Desk>, object: String, id: String) -> Result<Vec<HistoryEntry>> {
    desk.session(|s| s.history_of(&object, &id))
}

/// The mapping suggested for a file (by name and content), with each column's type and the
/// picklist values the object does not hold.
#[tauri::command]
pub async fn suggest_import(
    desk: State<'_, Desk>,
    object: String,
    file: Upload,
    tool: Option<SourceTool>,
) -> Result<MappingSuggestion> {
    let (format, bytes) = (file.format()?, file.bytes()?);
    desk.session(|s| import::suggest(s, &object, Table::read(format, &bytes)?, tool))
}

/// Import a file (CSV, spreadsheet, vCards) the UI read from the file the user picked (the app
/// needs no file-system permission for it) with `options` (a dry run lists every row's problem); progress over `progress`; `cancel_model_call(call)` stops it, nothing written.
#[tauri::command]
pub async fn import_file(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    object: String,
    file: Upload,
    options: ImportOptions,
    progress: Channel<ImportProgress>,
) -> Result<ImportReport> {
    let running = calls.begin(&call)?;
    let (format, bytes) = (file.format()?, file.bytes()?);
    let mut report = |p: &ImportProgress| {
        let _ = progress.send(p.clone());
    };
    let cancelled = || running.cancel.is_cancelled();
    desk.beside(|ws, user| {
        import::import_file(
            &ws.session(user)?,
            &object,
            format,
            &bytes,
            &options,
            Watch { progress: &mut report, cancelled: &cancelled },
        )
    })
}

/// Export a list (its query spec, without paging) as CSV to the file the user chooses in the
/// native Save dialog (it opens on the Downloads folder with `name.csv`); `None`: cancelled.
#[tauri::command]
pub async fn export_csv(
    app: AppHandle,
    desk: State<'_, Desk>,
    spec: QuerySpec,
    name: String,
) -> Result<Option<ExportResult>> {
    let folder = app.path().download_dir().or_else(|_| app.path().home_dir()).ok();
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let Some(path) = desktop::save_as(&app, "Export as CSV", folder, &format!("{safe}.csv"), ("CSV", "csv"))
    else {
        return Ok(None);
    };
    desk.session(|s| {
        let file = std::fs::File::create(&path)?;
        let records = csvio::export_csv(s, &spec, std::io::BufWriter::new(file))?;
        Ok(Some(ExportResult { path: path.display().to_string(), records }))
    })
}

#[tauri::command]
pub async fn save_list_view(
    desk: State<'_, Desk>,
    name: String,
    spec: QuerySpec,
    source: Option<String>,
) -> Result<ListView> {
    desk.session(|s| s.save_list_view(&name, &spec, source.as_deref()))
}

#[tauri::command]
pub async fn list_views(desk: State<'_, Desk>, object: String) -> Result<Vec<ListView>> {
    desk.session(|s| s.list_views(&object))
}

#[tauri::command]
pub async fn vocabulary(desk: State<'_, Desk>) -> Result<Vec<ObjectVocabulary>> {
    desk.session(|s| s.vocabulary())
}

/// Replace one object's terms (a deploy by the current user).
#[tauri::command]
pub async fn save_terms(desk: State<'_, Desk>, object: String, terms: Vec<TermDef>) -> Result<()> {
    desk.with(|open| open.ws.deploy_terms(&open.user, &object, terms).map(|_| ()))
}
