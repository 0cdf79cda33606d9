//! Models: providers and their pins, the built-in model, and the MCP server for other apps.

use super::*;

#[tauri::command]
pub async fn provider_settings(desk: State<'_, Desk>) -> Result<ProviderSettings> {
    desk.session(|s| s.provider_settings())
}

/// Add or replace a provider; a key typed with it goes to the OS keyring, never the workspace.
#[tauri::command]
pub async fn save_provider(
    desk: State<'_, Desk>,
    config: ProviderConfig,
    secret: Option<String>,
) -> Result<ProviderSettings> {
    desk.session(|s| {
        // The provider is validated and saved first, so a refused one leaves no key behind.
        s.add_provider(&config)?;
        if let (Some(r), Some(k)) = (&config.credential_ref, secret.filter(|k| !k.is_empty())) {
            s.store_secret(r, &Secret::new(k))?;
        }
        s.provider_settings()
    })
}

#[tauri::command]
pub async fn remove_provider(desk: State<'_, Desk>, key: String) -> Result<ProviderSettings> {
    desk.session(|s| {
        s.remove_provider(&key)?;
        s.provider_settings()
    })
}

/// "Test connection": server kind, models and digests, round-trip time.
#[tauri::command]
pub async fn test_provider(desk: State<'_, Desk>, key: String) -> Result<ConnectionReport> {
    let endpoint = desk.session(|s| s.endpoint(&key))?;
    pins::test_connection(&endpoint).await
}

/// Local model servers answering on the usual ports of 127.0.0.1.
#[tauri::command]
pub async fn discover_providers() -> Result<Vec<ConnectionReport>> {
    Ok(pins::discover().await)
}

/// Pin a model by what the server serves now.
#[tauri::command]
pub async fn pin_model(
    desk: State<'_, Desk>,
    key: String,
    provider: String,
    model: String,
    settings: PinSettings,
) -> Result<ProviderSettings> {
    pins::pin_served_model(
        &UserDesk::current(&desk)?,
        &key,
        &provider,
        &model,
        pins::Weights::Served,
        &settings,
    )
    .await?;
    desk.session(|s| s.provider_settings())
}

/// Check a pin against the server; drift is recorded and refuses calls until repinned.
#[tauri::command]
pub async fn check_model(desk: State<'_, Desk>, key: String) -> Result<ProviderSettings> {
    pins::check_pin(&UserDesk::current(&desk)?, &key).await?;
    desk.session(|s| s.provider_settings())
}

/// The model fitness check: every suite on `model_pin`, beside the current model's runs; each
/// judged case is sent over `progress`; `cancel_model_call(call)` stops it.
/// The built-in model: the catalog, what is installed, whether a `llama-server` was found, what
/// runs, and whether this user may turn it on.
#[tauri::command]
pub async fn built_in_model(app: AppHandle, desk: State<'_, Desk>) -> Result<BuiltInModel> {
    let data = app_data(&app)?;
    desk.session(|s| Ok(s.built_in_model(&data)))
}

/// "Use the built-in model" (one click, `ai.manage`): install a catalog model (`model`, or the
/// one chosen for this machine; from `source` when given) with its download's progress over
/// `progress`, serve it, pin it and bind it where no model is bound. `cancel_model_call(call)` stops the download (what was
/// fetched is kept).
#[tauri::command]
pub async fn turn_on_built_in_model(
    app: AppHandle,
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    model: Option<String>,
    source: Option<String>,
    progress: Channel<DownloadProgress>,
) -> Result<countersign_kernel::ai::pipeline::ModelInUse> {
    let running = calls.begin(&call)?;
    let data = app_data(&app)?;
    let sessions = UserDesk::current(&desk)?;
    let choice = match model.as_deref() {
        Some(name) => ModelChoice::Catalog { name, source: source.as_deref() },
        None => ModelChoice::Chosen,
    };
    runtime::turn_on(&sessions, &data, choice, &running.cancel, &mut |p| {
        let _ = progress.send(p);
    })
    .await
}

/// The native Open dialog for a GGUF model file, then it is installed, served and pinned as the
/// built-in model (`None`: cancelled).
#[tauri::command]
pub async fn choose_built_in_model_file(
    app: AppHandle,
    desk: State<'_, Desk>,
) -> Result<Option<countersign_kernel::ai::pipeline::ModelInUse>> {
    let Some(path) = desktop::pick_model_file(&app) else { return Ok(None) };
    let data = app_data(&app)?;
    let sessions = UserDesk::current(&desk)?;
    runtime::turn_on(&sessions, &data, ModelChoice::File(&path), &Cancel::default(), &mut |_| {})
        .await
        .map(Some)
}

/// How this machine runs the built-in model (threads, context; `ai.manage`). A running one
/// restarts with them on its next use.
#[tauri::command]
pub async fn set_built_in_settings(
    app: AppHandle,
    desk: State<'_, Desk>,
    settings: runtime::RunSettings,
) -> Result<runtime::RunSettings> {
    let data = app_data(&app)?;
    runtime::set_run_settings(&UserDesk::current(&desk)?, &data, settings)
}

/// "Use this server" on the first-run offer: a model server found on this machine is added,
/// its model pinned and bound where no model is bound (`ai.manage`).
#[tauri::command]
pub async fn use_found_server(
    desk: State<'_, Desk>,
    kind: ProviderKind,
    base_url: String,
    model: String,
) -> Result<countersign_kernel::ai::pipeline::ModelInUse> {
    countersign_kernel::ai::pipeline::use_found_server(&UserDesk::current(&desk)?, kind, &base_url, &model)
        .await
}

/// Settings → "Use your records from other AI apps": the MCP server of this workspace, its
/// tools, and how the usual AI apps run it as this user.
#[tauri::command]
pub async fn mcp_setup(app: AppHandle, desk: State<'_, Desk>) -> Result<mcp::ServerSetup> {
    let program = desktop::mcp_program(&app);
    desk.session(|s| s.mcp_setup(&program))
}

/// Turn the MCP server and its tools on or off (`ai.manage`).
#[tauri::command]
pub async fn set_mcp_settings(
    app: AppHandle,
    desk: State<'_, Desk>,
    settings: mcp::ServerSettings,
) -> Result<mcp::ServerSetup> {
    let program = desktop::mcp_program(&app);
    desk.session(|s| {
        s.set_mcp_settings(&settings)?;
        s.mcp_setup(&program)
    })
}

/// Every tool a model may be given: the kernel's own and those from outside.
#[tauri::command]
pub async fn tools(desk: State<'_, Desk>) -> Result<Vec<ToolInfo>> {
    desk.session(|s| s.tools())
}

/// Whether a tool from outside runs, waits for a person or is refused (needs ai.manage).
#[tauri::command]
pub async fn set_tool_policy(
    desk: State<'_, Desk>,
    name: String,
    policy: Policy,
    allow_changes_outside: bool,
) -> Result<ToolInfo> {
    desk.session(|s| s.set_tool_policy(&name, policy, allow_changes_outside))
}

/// The MCP servers connected as sources of tools.
#[tauri::command]
pub async fn mcp_servers(desk: State<'_, Desk>) -> Result<Vec<mcp_servers::McpServerInfo>> {
    desk.session(|s| s.mcp_servers())
}

/// Connect to an MCP server and review its tools against what was pinned (needs ai.manage).
#[tauri::command]
pub async fn inspect_mcp_server(
    desk: State<'_, Desk>,
    server: mcp_servers::McpServerDef,
) -> Result<mcp_servers::ServerReview> {
    mcp_servers::inspect_mcp_server(&UserDesk::current(&desk)?, &server).await
}

/// Pin a reviewed server's tools with the effects the admin confirmed (needs ai.manage).
#[tauri::command]
pub async fn pin_mcp_server(
    desk: State<'_, Desk>,
    server: mcp_servers::McpServerDef,
    digest: String,
    effects: std::collections::BTreeMap<String, Effect>,
) -> Result<mcp_servers::McpServerInfo> {
    mcp_servers::pin_mcp_server(&UserDesk::current(&desk)?, &server, &digest, &effects).await
}

/// Disconnect an MCP server: its tools are no longer offered (needs ai.manage).
#[tauri::command]
pub async fn remove_mcp_server(desk: State<'_, Desk>, name: String) -> Result<()> {
    desk.session(|s| s.remove_mcp_server(&name))
}

/// Save a tool from outside written in the app (its next version; needs ai.manage); a key typed
/// with it goes to the OS keyring under its credential reference, never the workspace.
#[tauri::command]
pub async fn save_tool(
    desk: State<'_, Desk>,
    definition: ToolDef,
    secret: Option<String>,
) -> Result<ToolInfo> {
    desk.session(|s| {
        // Checked and saved first, so a refused tool leaves no key behind.
        let saved = s.save_tool(&definition)?;
        if let (ToolKind::Http { credential: Some(r), .. }, Some(k)) =
            (&definition.implementation, secret.filter(|k| !k.is_empty()))
        {
            s.store_secret(r, &Secret::new(k))?;
        }
        Ok(saved)
    })
}
