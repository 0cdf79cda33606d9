// Typed wrappers over the app's IPC commands. Types come from ../bindings (generated from Rust).
import { invoke, type Channel } from "@tauri-apps/api/core";
import type { BuiltInModel } from "../bindings/BuiltInModel";
import type { Decision } from "../bindings/Decision";
import type { ToolCallView } from "../bindings/ToolCallView";
import type { ToolInfo } from "../bindings/ToolInfo";
import type { ToolDef } from "../bindings/ToolDef";
import type { Effect } from "../bindings/Effect";
import type { McpServerDef } from "../bindings/McpServerDef";
import type { McpServerInfo } from "../bindings/McpServerInfo";
import type { ServerReview } from "../bindings/ServerReview";
import type { Policy } from "../bindings/Policy";
import type { ModelPin } from "../bindings/ModelPin";
import type { TemplateSummary } from "../bindings/TemplateSummary";
import type { Cursor } from "../bindings/Cursor";
import type { RecordCount } from "../bindings/RecordCount";
import type { UseIndex } from "../bindings/UseIndex";
import type { DeployProgress } from "../bindings/DeployProgress";
import type { DeployPreview } from "../bindings/DeployPreview";
import type { ImportOptions } from "../bindings/ImportOptions";
import type { ImportProgress } from "../bindings/ImportProgress";
import type { MappingSuggestion } from "../bindings/MappingSuggestion";
import type { SeenAs } from "../bindings/SeenAs";
import type { SourceTool } from "../bindings/SourceTool";
import type { Upload } from "../bindings/Upload";
import type { WorkspaceDefinition } from "../bindings/WorkspaceDefinition";
import type { ModelInUse } from "../bindings/ModelInUse";
import type { RunSettings } from "../bindings/RunSettings";
import type { ProviderKind } from "../bindings/ProviderKind";
import type { ServerSetup } from "../bindings/ServerSetup";
import type { Conversation } from "../bindings/Conversation";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { ScreenContext } from "../bindings/ScreenContext";
import type { Turn } from "../bindings/Turn";
import type { TurnProgress } from "../bindings/TurnProgress";
import type { ServerSettings } from "../bindings/ServerSettings";
import type { Progress } from "../bindings/Progress";
import type { AskAnswer } from "../bindings/AskAnswer";
import type { AskProgress } from "../bindings/AskProgress";
import type { ExtractAnswer } from "../bindings/ExtractAnswer";
import type { SummaryAnswer } from "../bindings/SummaryAnswer";
import type { AutoApplyList } from "../bindings/AutoApplyList";
import type { Proposal } from "../bindings/Proposal";
import type { ProposalReview } from "../bindings/ProposalReview";
import type { JsonValue } from "../bindings/serde_json/JsonValue";
import type { ListView } from "../bindings/ListView";
import type { Error as KernelError } from "../bindings/Error";
import type { ExportResult } from "../bindings/ExportResult";
import type { HistoryEntry } from "../bindings/HistoryEntry";
import type { ImportReport } from "../bindings/ImportReport";
import type { ObjectView } from "../bindings/ObjectView";
import type { QueryResult } from "../bindings/QueryResult";
import type { QuerySpec } from "../bindings/QuerySpec";
import type { Record } from "../bindings/Record";
import type { SaveOutcome } from "../bindings/SaveOutcome";
import type { SaveRequest } from "../bindings/SaveRequest";
import type { WorkspaceView } from "../bindings/WorkspaceView";
import type { ConnectionReport } from "../bindings/ConnectionReport";
import type { PinSettings } from "../bindings/PinSettings";
import type { ProviderConfig } from "../bindings/ProviderConfig";
import type { ProviderSettings } from "../bindings/ProviderSettings";
import type { LearnedExample } from "../bindings/LearnedExample";
import type { ObjectVocabulary } from "../bindings/ObjectVocabulary";
import type { TermDef } from "../bindings/TermDef";
import type { SuiteRevision } from "../bindings/SuiteRevision";
import type { Backup } from "../bindings/Backup";
import type { RecentWorkspace } from "../bindings/RecentWorkspace";
import type { About } from "../bindings/About";
import type { Studio } from "../bindings/Studio";
import type { DiffPart } from "../bindings/DiffPart";
import type { CapabilityBinding } from "../bindings/CapabilityBinding";
import type { EvalRun } from "../bindings/EvalRun";
import type { SuiteProgress } from "../bindings/SuiteProgress";
import type { Activity } from "../bindings/Activity";
import type { TraceEntry } from "../bindings/TraceEntry";
import type { TraceFilter } from "../bindings/TraceFilter";
import type { UserRights } from "../bindings/UserRights";
import type { Fitness } from "../bindings/Fitness";
import type { FitnessProgress } from "../bindings/FitnessProgress";

/** A failed command: carries the kernel's typed error. */
export class CommandError extends Error {
  readonly error: KernelError;
  constructor(error: KernelError) {
    super(error.message);
    this.error = error;
  }
}

export function isKernelError(e: unknown): e is KernelError {
  return typeof e === "object" && e !== null && "code" in e && "message" in e && "fault" in e;
}

/** The typed error of a failed command; anything else that was thrown, as the platform's fault. */
export function kernelError(e: unknown): KernelError {
  if (e instanceof CommandError) return e.error;
  if (isKernelError(e)) return e;
  return { code: "internal", fault: "platform", message: String(e), retriable: false };
}

async function call<T>(cmd: string, args?: { [k: string]: unknown }): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw new CommandError(kernelError(e));
  }
}

export const api = {
  appState: () => call<WorkspaceView>("app_state"),
  openWorkspace: (path: string) => call<WorkspaceView>("open_workspace", { path }),
  /** The templates a new workspace may start from. */
  workspaceTemplates: () => call<TemplateSummary[]>("workspace_templates"),
  createWorkspace: (path: string, template: string, records: boolean) =>
    call<WorkspaceView>("create_workspace", { path, template, records }),
  /** The native Open dialog, then the workspace chosen is opened (null: cancelled). */
  chooseWorkspace: () => call<WorkspaceView | null>("choose_workspace"),
  /** The native Save dialog, then a new workspace is created there (null: cancelled). */
  chooseNewWorkspace: (template: string, records: boolean) =>
    call<WorkspaceView | null>("choose_new_workspace", { template, records }),
  /** The workspaces opened lately on this machine, newest first. */
  recentWorkspaces: () => call<RecentWorkspace[]>("recent_workspaces"),
  forgetRecentWorkspace: (path: string) => call<void>("forget_recent_workspace", { path }),
  /** The version, the workspace and its backups, the data and log folders. */
  about: () => call<About>("about"),
  /** The open workspace's backups, newest first. */
  backups: () => call<Backup[]>("backups"),
  backUp: () => call<Backup>("back_up"),
  /** Replace the open workspace with a backup (metadata.deploy); what it replaces is backed up first. */
  restoreBackup: (path: string) => call<WorkspaceView>("restore_backup", { path }),
  switchUser: (user: string) => call<WorkspaceView>("switch_user", { user }),
  /** Choose the acting user's own locale (`null`: the workspace's). */
  setOwnLocale: (locale: string | null) => call<WorkspaceView>("set_own_locale", { locale }),
  /** The folder of the app's log files. */
  logLocation: () => call<string>("log_location"),
  describeObject: (object: string) => call<ObjectView>("describe_object", { object }),
  query: (spec: QuerySpec) => call<QueryResult>("query_records", { spec }),
  /** How many records a list holds: exact unfiltered; filtered, "10,000+" unless `exact`. */
  countRecords: (spec: QuerySpec, exact = false) => call<RecordCount>("count_records", { spec, exact }),
  /** The cursor a page starts after to show row `position` first (a scroll far down). */
  cursorAt: (spec: QuerySpec, position: number) => call<Cursor | null>("cursor_at", { spec, position }),
  /** How many rows sort before the first one reaching `values` (a jump to a value). */
  positionOf: (spec: QuerySpec, values: JsonValue[]) => call<number>("position_of", { spec, values }),
  /** Indexes made for the sorts and filters people use (admins). */
  useIndexes: () => call<UseIndex[]>("use_indexes"),
  /** Pin or unpin one (`pin`), or drop it now (`pin` null). */
  changeUseIndex: (name: string, pin: boolean | null) => call<UseIndex | null>("change_use_index", { name, pin }),
  getRecord: (object: string, id: string) => call<Record>("get_record", { object, id }),
  save: (request: SaveRequest) => call<SaveOutcome>("save_record", { request }),
  history: (object: string, id: string) => call<HistoryEntry[]>("record_history", { object, id }),
  /** The mapping suggested for a file, its columns' types, the picklist values it brings. */
  suggestImport: (object: string, file: Upload, tool: SourceTool | null) =>
    call<MappingSuggestion>("suggest_import", { object, file, tool }),
  /** Import a file; progress over `progress`; `cancelCall(callId)` stops it, nothing written. */
  importFile: (callId: string, object: string, file: Upload, options: ImportOptions, progress: Channel<ImportProgress>) =>
    call<ImportReport>("import_file", { call: callId, object, file, options, progress }),
  /** Add values to a picklist (a deploy by the current user). */
  addPicklistValues: (object: string, field: string, values: string[]) =>
    call<null>("add_picklist_values", { object, field, values }),
  /** The definition as deployed, retired parts included (metadata.deploy). */
  workspaceDefinition: () => call<WorkspaceDefinition>("workspace_definition"),
  /** What deploying a draft would change, and every problem it would meet in the data. */
  previewDeploy: (definition: WorkspaceDefinition) => call<DeployPreview>("preview_deploy", { definition }),
  /** Deploy a draft; each step over `progress`; `cancelCall(callId)` stops it, nothing changed. */
  deployDefinition: (callId: string, definition: WorkspaceDefinition, force: boolean, progress: Channel<DeployProgress>) =>
    call<WorkspaceView>("deploy_definition", { call: callId, definition, force, progress }),
  /** An object (and a record) as another user sees it. */
  seeAs: (user: string, object: string, id: string | null) => call<SeenAs>("see_as", { user, object, id }),
  /** The native Save dialog, then the list is written there as CSV (null: cancelled). */
  exportCsv: (spec: QuerySpec, name: string) => call<ExportResult | null>("export_csv", { spec, name }),
  providerSettings: () => call<ProviderSettings>("provider_settings"),
  saveProvider: (config: ProviderConfig, secret: string | null) => call<ProviderSettings>("save_provider", { config, secret }),
  removeProvider: (key: string) => call<ProviderSettings>("remove_provider", { key }),
  testProvider: (key: string) => call<ConnectionReport>("test_provider", { key }),
  discoverProviders: () => call<ConnectionReport[]>("discover_providers"),
  pinModel: (key: string, provider: string, model: string, settings: PinSettings) =>
    call<ProviderSettings>("pin_model", { key, provider, model, settings }),
  checkModel: (key: string) => call<ProviderSettings>("check_model", { key }),
  // The model calls: `callId` names the call for `cancelCall`; the model's progress comes over
  // `progress` (see ModelCall, which makes both).
  ask: (callId: string, question: string, progress: Channel<AskProgress>) =>
    call<AskAnswer>("ask", { call: callId, question, progress }),
  cancelCall: (callId: string) => call<null>("cancel_model_call", { call: callId }),
  /** Extract a document's bytes into a proposal for `object` (or an update of `record`). */
  extract: (callId: string, name: string, bytes: Uint8Array, object: string, record: string | null, progress: Channel<AskProgress>) =>
    // A typed array would be sent as an object of indices; the command takes a list of bytes.
    call<ExtractAnswer>("extract", { call: callId, name, bytes: Array.from(bytes), object, record, progress }),
  /** Summarize a record; `progress` carries the model's text as it streams (unchecked). */
  summarize: (callId: string, object: string, id: string, progress: Channel<AskProgress>) =>
    call<SummaryAnswer>("summarize", { call: callId, object, id, progress }),
  proposals: () => call<Proposal[]>("proposals"),
  reviewProposal: (id: string) => call<ProposalReview>("review_proposal", { id }),
  /**
   * `edits`: the reviewer's own values (field → value), written in the same save. `rows`: the
   * child rows to create with it (indexes into the proposal's `children`); null = all of them.
   */
  acceptProposal: (id: string, fields: string[] | null, edits: { [field: string]: JsonValue } = {}, rows: number[] | null = null) =>
    call<Proposal>("accept_proposal", { id, fields, edits, rows }),
  discardProposal: (id: string, reason: string | null) => call<Proposal>("discard_proposal", { id, reason }),
  undoProposal: (id: string) => call<Proposal>("undo_proposal", { id }),
  toolApprovals: () => call<ToolCallView[]>("tool_approvals"),
  tools: () => call<ToolInfo[]>("tools"),
  /** Save a tool from outside (its next version); a typed key goes to the OS keyring under its credential reference. */
  saveTool: (definition: ToolDef, secret: string | null) => call<ToolInfo>("save_tool", { definition, secret }),
  setToolPolicy: (name: string, policy: Policy, allowChangesOutside: boolean) =>
    call<ToolInfo>("set_tool_policy", { name, policy, allowChangesOutside }),
  /** Tool calls whose outcome is unknown, and a person's word on what became of one. */
  toolCallsToResolve: () => call<ToolCallView[]>("tool_calls_to_resolve"),
  resolveToolCall: (id: string, happened: boolean, note: string) => call<ToolCallView>("resolve_tool_call", { id, happened, note }),
  decideToolCall: (id: string, decision: Decision, comment: string | null) =>
    call<ToolCallView>("decide_tool_call", { id, decision, comment }),
  autoApplyList: (capability: string, object: string) => call<AutoApplyList>("auto_apply_list", { capability, object }),
  setAutoApply: (capability: string, object: string, fields: string[]) =>
    call<AutoApplyList>("set_auto_apply", { capability, object, fields }),
  saveListView: (name: string, spec: QuerySpec, source: string | null) =>
    call<ListView>("save_list_view", { name, spec, source }),
  listViews: (object: string) => call<ListView[]>("list_views", { object }),
  learnFromCorrection: (traceId: string, spec: QuerySpec) =>
    call<LearnedExample | null>("learn_from_correction", { traceId, spec }),
  learnedExamples: () => call<LearnedExample[]>("learned_examples"),
  forgetExample: (id: string) => call<void>("forget_example", { id }),
  vocabulary: () => call<ObjectVocabulary[]>("vocabulary"),
  saveTerms: (object: string, terms: TermDef[]) => call<void>("save_terms", { object, terms }),
  // The AI studio (ai.author / ai.manage).
  aiStudio: () => call<Studio>("ai_studio"),
  promptDiff: (prompt: string, a: number, b: number) => call<DiffPart[]>("prompt_diff", { prompt, a, b }),
  /** A new version of `prompt` from version `base` with new instructions; not activated. */
  publishPrompt: (prompt: string, base: number, instructions: string) =>
    call<number>("publish_prompt", { prompt, base, instructions }),
  /** The next version of a suite: a new floor, which cases are hard, cases removed and added. */
  reviseSuite: (suite: string, revision: SuiteRevision) => call<number>("revise_suite", { suite, revision }),
  /** Through the eval gate; `overrideReason` (ai.manage) lets a version without a passing run through, recorded. */
  activatePrompt: (prompt: string, version: number, overrideReason: string | null = null) =>
    call<null>("activate_prompt", { prompt, version, overrideReason }),
  bindModel: (capability: string, modelPin: string | null, overrideReason: string | null = null) =>
    call<CapabilityBinding>("bind_model", { capability, modelPin, overrideReason }),
  /** Run an eval suite against a prompt version and a model pin (null: the current ones); `cancelCall(callId)` stops it. */
  runEvalSuite: (callId: string, suite: string, promptVersion: number | null, modelPin: string | null, progress: Channel<SuiteProgress>) =>
    call<EvalRun>("run_eval_suite", { call: callId, suite, promptVersion, modelPin, progress }),
  // Activity: your own trace entries (everyone's with ai.manage) and spend from `since` (YYYY-MM-DD).
  activity: (filter: TraceFilter, since: string) => call<Activity>("activity", { filter, since }),
  traceDetail: (id: string) => call<TraceEntry>("trace_detail", { id }),
  setTraceDays: (days: number) => call<null>("set_trace_days", { days }),
  /** A capability's whole binding, through the eval gate (a different model needs a passing run, or `overrideReason`). */
  saveBinding: (binding: CapabilityBinding, overrideReason: string | null = null) =>
    call<CapabilityBinding>("save_binding", { binding, overrideReason }),
  userRights: () => call<UserRights[]>("user_rights"),
  /** Every suite on `modelPin`, beside the current model's latest runs; `cancelCall(callId)` stops it. */
  modelFitness: (callId: string, modelPin: string, progress: Channel<FitnessProgress>) =>
    call<Fitness[]>("model_fitness", { call: callId, modelPin, progress }),
  builtInModel: () => call<BuiltInModel>("built_in_model"),
  /** Install (with the download's progress), start, pin and bind the built-in model; `cancelCall(callId)` stops the download. */
  turnOnBuiltInModel: (callId: string, model: string | null, source: string | null, progress: Channel<Progress>) =>
    call<ModelInUse>("turn_on_built_in_model", { call: callId, model, source, progress }),
  /** The native Open dialog for a GGUF file, then it becomes the built-in model (null: cancelled). */
  chooseBuiltInModelFile: () => call<ModelInUse | null>("choose_built_in_model_file"),
  /** Threads and context of the built-in model on this machine. */
  setBuiltInSettings: (settings: RunSettings) => call<RunSettings>("set_built_in_settings", { settings }),
  /** A model server found on this machine: added, its model pinned and bound where none is. */
  useFoundServer: (kind: ProviderKind, baseUrl: string, model: string) =>
    call<ModelInUse>("use_found_server", { kind, baseUrl, model }),
  /** The MCP server: on or off, its tools, and the configuration for the usual AI apps. */
  mcpSetup: () => call<ServerSetup>("mcp_setup"),
  setMcpSettings: (settings: ServerSettings) => call<ServerSetup>("set_mcp_settings", { settings }),
  /** One turn of the assistant (a new conversation when `conversation` is null); `cancelCall(callId)` stops it. */
  assistantTurn: (
    callId: string,
    conversation: string | null,
    text: string,
    context: ScreenContext | null,
    document: { name: string; bytes: Uint8Array } | null,
    progress: Channel<TurnProgress>,
  ) =>
    call<Turn>("assistant_turn", {
      call: callId,
      conversation,
      text,
      context,
      document: document && { name: document.name, bytes: Array.from(document.bytes) },
      progress,
    }),
  /** Go on with a turn that paused on a tool call, once it is decided. */
  resumeAssistantTurn: (callId: string, conversation: string, progress: Channel<TurnProgress>) =>
    call<Turn>("resume_assistant_turn", { call: callId, conversation, progress }),
  /** MCP servers connected as sources of tools; one reviewed (its tools against what was pinned) and pinned with the effects confirmed. */
  mcpServers: () => call<McpServerInfo[]>("mcp_servers"),
  inspectMcpServer: (server: McpServerDef) => call<ServerReview>("inspect_mcp_server", { server }),
  pinMcpServer: (server: McpServerDef, digest: string, effects: { [serverTool: string]: Effect }) =>
    call<McpServerInfo>("pin_mcp_server", { server, digest, effects }),
  removeMcpServer: (name: string) => call<null>("remove_mcp_server", { name }),
  conversations: () => call<ConversationSummary[]>("conversations"),
  conversation: (id: string) => call<Conversation>("conversation", { id }),
  reviseResultSet: (conversation: string, set: string, spec: QuerySpec) =>
    call<Conversation>("revise_result_set", { conversation, set, spec }),
  deleteConversation: (id: string) => call<null>("delete_conversation", { id }),
};
