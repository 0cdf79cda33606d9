// The AI studio's pure logic (tested in studio.test.ts): a run's figures as the history shows
// them, the default candidate of a suite run, the eval gate's refusal as a list of failing
// cases, the two versions a prompt diff compares, a capability's binding as a form and back, and
// a suite's next version as an edit draft and the revision it sends; and what the studio's
// panels share (a change through the eval gate, a suite run in flight).
import { bannerText } from "./errors";
import type { Autonomy } from "../bindings/Autonomy";
import type { Budget } from "../bindings/Budget";
import type { CapabilityBinding } from "../bindings/CapabilityBinding";
import type { CapabilitySettings } from "../bindings/CapabilitySettings";
import type { CaseResult } from "../bindings/CaseResult";
import type { Error as KernelError } from "../bindings/Error";
import type { EvalRun } from "../bindings/EvalRun";
import type { GateDecision } from "../bindings/GateDecision";
import type { PromptVersion } from "../bindings/PromptVersion";
import type { StudioCapability } from "../bindings/StudioCapability";
import type { Suite } from "../bindings/Suite";
import type { CaseOutline } from "../bindings/CaseOutline";
import type { SuiteCase } from "../bindings/SuiteCase";
import type { SuiteProgress } from "../bindings/SuiteProgress";
import type { SuiteRevision } from "../bindings/SuiteRevision";
import type { Fitness } from "../bindings/Fitness";
import type { FitnessProgress } from "../bindings/FitnessProgress";
import type { Verdict } from "../bindings/Verdict";
import type { Judged } from "../bindings/Judged";

/** A version's number (the generated type says bigint; over IPC it is a JSON number). */
export const versionOf = (v: Pick<PromptVersion, "version">): number => Number(v.version);

/** The active version's number; the newest one when none is marked active; null without versions. */
export function activeVersion(cap: Pick<StudioCapability, "versions">): number | null {
  const active = cap.versions.find((v) => v.active) ?? cap.versions[cap.versions.length - 1];
  return active ? versionOf(active) : null;
}

/** What a suite run is against. */
export type Candidate = { promptVersion: number | null; modelPin: string | null };

/** The default candidate of a run: the active prompt version on the capability's current model (else the first pin). */
export function defaultCandidate(cap: Pick<StudioCapability, "versions" | "model">, pins: readonly string[]): Candidate {
  return { promptVersion: activeVersion(cap), modelPin: cap.model ?? pins[0] ?? null };
}

/** A timestamp to the minute: `2025-03-01 14:05`. */
export const when = (ts: string): string => ts.replace("T", " ").slice(0, 16);

/** A share as a whole percentage (`88 %`); `—` of nothing. */
export function percent(part: number, whole: number): string {
  return whole > 0 ? `${Math.round((part / whole) * 100)} %` : "—";
}

/** A suite's floor (a fraction) as a percentage. */
export const floorText = (floor: number): string => `${Math.round(floor * 100)} %`;

/** Seconds from milliseconds, to a tenth (`1.2 s`). */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A run's cost: 0 plainly, small amounts to four decimals, others to two. */
export function costText(cost: number): string {
  if (cost === 0) return "0";
  return cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2);
}

/** A run as one row of the history. */
export type RunFigures = {
  when: string;
  version: string;
  model: string;
  outcome: string;
  passed: string;
  hardFailures: number;
  p50: string;
  tokens: string;
  cost: string;
};

export function runFigures(run: EvalRun): RunFigures {
  return {
    when: when(run.finishedAt || run.startedAt),
    version: `v${run.promptVersion}`,
    model: run.modelPin,
    outcome: run.outcome,
    passed: `${run.passed}/${run.total} (${percent(run.passed, run.total)})`,
    hardFailures: run.hardFailures,
    p50: seconds(run.p50Ms),
    tokens: (run.promptTokens + run.completionTokens).toLocaleString("en-US"),
    cost: costText(run.cost),
  };
}

/** A run's judged score against its floor ("50 % of 75 %"), or "—" when the suite has none. */
export function judgedText(run: Pick<EvalRun, "judged">): string {
  const j = run.judged;
  return j ? `${Math.round(j.score * 100)} % (floor ${Math.round(j.floor * 100)} %)` : "—";
}

/** What the judge said of each case: the criteria it found unmet first, with its reasons. */
export function judgedCases(run: Pick<EvalRun, "cases">): { id: string; score: number; unjudged: string | null; verdicts: Verdict[] }[] {
  return run.cases
    .filter((c) => c.judged)
    .map((c) => {
      const j = c.judged!;
      const verdicts = [...j.verdicts.filter((v) => !v.pass), ...j.verdicts.filter((v) => v.pass)];
      return { id: c.id, score: j.score, unjudged: j.unjudged ?? null, verdicts };
    });
}

/** A run's cases that did not pass, hard ones first. */
export function failingCases(run: Pick<EvalRun, "cases">): CaseResult[] {
  const failing = run.cases.filter((c) => !c.pass);
  return [...failing.filter((c) => c.hard), ...failing.filter((c) => !c.hard)];
}

/** A suite's size: its cases and how many of them are hard. */
export function caseCounts(suite: Pick<Suite<CaseOutline>, "cases">): { cases: number; hard: number } {
  return { cases: suite.cases.length, hard: suite.cases.filter((c) => c.hard).length };
}

/**
 * A suite run as its live progress shows it, while it runs and after: the call's id, the cases
 * judged of how many, a line per judged case, and the run it stored or the error it ended with.
 */
export type LiveRun = {
  id: string;
  done: number;
  total: number;
  lines: { text: string; pass: boolean }[];
  running: boolean;
  result: EvalRun | null;
  error: string | null;
};

/** One judged case as the live progress shows it. */
export function progressLine(p: Pick<SuiteProgress, "result">): string {
  const r = p.result;
  const verdict = r.pass ? "PASS" : "FAIL";
  const hard = r.hard ? " (hard)" : "";
  const why = !r.pass && r.reason ? ` — ${r.reason}` : "";
  return `${verdict} ${r.id}${hard} · ${seconds(r.wallMs)}${why}`;
}

/** Where a fitness check is: `suite ask-demo 3/26 …` (the suite in progress and its cases judged). */
export function fitnessHeading(p: Pick<FitnessProgress, "suite" | "done" | "total">): string {
  return `suite ${p.suite} ${p.done}/${p.total} …`;
}

/** A run's figures as the fitness table compares them. */
export type FitnessSide = { model: string; outcome: string; passed: string; p50: string };

/** One row of the fitness table: the candidate model's figures beside the current model's (null: no run yet). */
export type FitnessRow = { capability: string; suite: string; candidate: FitnessSide; current: FitnessSide | null };

export function fitnessRow(f: Fitness): FitnessRow {
  const side = (r: EvalRun): FitnessSide => {
    const fig = runFigures(r);
    return { model: fig.model, outcome: fig.outcome, passed: fig.passed, p50: fig.p50 };
  };
  return { capability: f.capability, suite: f.suite, candidate: side(f.candidate), current: f.current ? side(f.current) : null };
}

/** A failing case as the gate names it. */
export type GateCase = { id: string; why: string; hard: boolean };
/** The gate's refusal: its message and the failing cases of the run it looked at (none when there is no run). */
export type GateRefusal = { message: string; cases: GateCase[] };

const HARD = "hard assertion: ";

/** The gate's refusal in an `eval.gate` error; null for any other error. */
export function gateRefusal(e: KernelError): GateRefusal | null {
  if (e.code !== "eval.gate") return null;
  const cases = (e.details ?? []).map((d) =>
    d.message.startsWith(HARD) ? { id: d.path, why: d.message.slice(HARD.length), hard: true } : { id: d.path, why: d.message, hard: false },
  );
  return { message: e.message, cases };
}

/**
 * A change the eval gate may refuse (activating a prompt version, binding a model, saving a
 * binding), and `again`: the same change made once more, with the reason for overriding the
 * gate's refusal.
 */
export type GatedChange = (
  | { action: "activate"; version: number }
  | { action: "bind"; pin: string | null }
  | { action: "save"; binding: CapabilityBinding }
) & { again: (reason: string) => void };

/**
 * How a studio panel makes a gated change: `send` it (with the reason for overriding the gate,
 * if any); `done` is the notice once it went through. The gate's refusal is kept to show; any
 * other error goes where `failed` says (the banner it returns, by default the error's text).
 */
export type Gated = (
  change: GatedChange,
  send: (reason: string | null) => Promise<unknown>,
  done: string,
  reason?: string | null,
  failed?: (k: KernelError) => string | null,
) => Promise<void>;

/** How a gate decision was let through: its passing run, or the override's reason. */
export function decisionBasis(d: Pick<GateDecision, "overridden" | "reason" | "runId">): string {
  if (d.overridden) return `overridden: ${d.reason ?? ""}`.trimEnd();
  return d.runId ?? "—";
}

/**
 * The versions chosen for a diff after toggling `n`: at most two, in the order chosen; a third
 * choice lets go of the first.
 */
export function toggleChoice(chosen: readonly number[], n: number): number[] {
  if (chosen.includes(n)) return chosen.filter((c) => c !== n);
  return [...chosen, n].slice(-2);
}

/** The pair a diff compares (older first), once two versions are chosen. */
export function diffPair(chosen: readonly number[]): [number, number] | null {
  if (chosen.length !== 2) return null;
  const [a, b] = [...chosen].sort((x, y) => x - y);
  return [a, b];
}

/** A model pin choice as a select holds it ("" = the workspace's only pin) and back. */
export const pinChoice = (pin: string | null | undefined): string => pin ?? "";
export const pinOfChoice = (choice: string): string | null => (choice === "" ? null : choice);

/** A fresh id for a model call (`cancel_model_call` names it). */
export const callId = (kind: string): string => `${kind}-${Date.now()}-${Math.random().toString(36).slice(2)}`;

// ——— The binding editor: a capability's binding as a form of strings, and back (validated).

/** The binding form's fields, in the order the form shows them (and the names of its inputs). */
export const BINDING_FIELDS = [
  "autonomy",
  "objects",
  "timeoutMs",
  "connectTimeoutMs",
  "maxOutputTokens",
  "projectionTokens",
  "maxSteps",
  "concurrency",
  "perMinute",
  "perInvocation",
  "perUserPerDay",
  "workspacePerMonth",
  "warnAt",
  "evalSuite",
] as const;
export type BindingField = (typeof BINDING_FIELDS)[number];

/** A binding as the form holds it: text as typed, except the autonomy (a select). */
export type BindingForm = { autonomy: Autonomy } & { [F in Exclude<BindingField, "autonomy">]: string };
/** A problem per field, as the form shows it by the field. */
export type BindingErrors = Partial<{ [F in BindingField]: string }>;

export const AUTONOMIES: readonly { value: Autonomy; label: string }[] = [
  { value: "read_only", label: "Read only — proposes nothing" },
  { value: "propose", label: "Propose — every proposal waits for review" },
  { value: "auto_apply", label: "Auto-apply — allowlisted fields apply as the user's save" },
];

/** A share (0–1) as the percentage the form shows (`0.8` → `80`, `0.07` → `7`). */
export const shareText = (share: number): string => String(Number((share * 100).toFixed(6)));

const amountText = (n: number | null | undefined): string => (n === null || n === undefined ? "" : String(n));

/** The form of a binding. The kernel sends an unset option as null (or leaves it out): both read as blank. */
export function bindingForm(b: CapabilityBinding): BindingForm {
  const s = b.settings;
  return {
    autonomy: b.autonomy,
    objects: (s.objects ?? []).join(", "),
    timeoutMs: String(s.timeoutMs),
    connectTimeoutMs: String(s.connectTimeoutMs),
    maxOutputTokens: String(s.maxOutputTokens),
    projectionTokens: String(s.projectionTokens),
    maxSteps: s.maxSteps === null || s.maxSteps === undefined ? "" : String(s.maxSteps),
    concurrency: String(s.rate.concurrency),
    perMinute: String(s.rate.perMinute),
    perInvocation: amountText(s.budget.perInvocation),
    perUserPerDay: amountText(s.budget.perUserPerDay),
    workspacePerMonth: amountText(s.budget.workspacePerMonth),
    warnAt: shareText(s.budget.warnAt),
    evalSuite: s.evalSuite ?? "",
  };
}

const U32_MAX = 4_294_967_295;

/** A positive whole number up to `max`, or the problem with it. */
function positiveInteger(text: string, max: number): number | string {
  const t = text.trim();
  if (t === "") return "Required: a whole number above 0.";
  if (!/^\d+$/.test(t)) return "Must be a whole number above 0.";
  const n = Number(t);
  if (n < 1) return "Must be a whole number above 0.";
  if (n > max) return `Must be at most ${max.toLocaleString("en-US")}.`;
  return n;
}

const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** An amount (0 or more), null when blank (no ceiling), or the problem with it. */
function ceiling(text: string): number | null | string {
  const t = text.trim();
  if (t === "") return null;
  if (!DECIMAL.test(t) || !Number.isFinite(Number(t))) return "Must be an amount of 0 or more, or blank for no ceiling.";
  return Number(t);
}

/** A percentage 0–100 as a share 0–1, or the problem with it. */
function share(text: string): number | string {
  const t = text.trim();
  if (t === "") return "Required: a percentage from 0 to 100.";
  const n = Number(t);
  if (!DECIMAL.test(t) || n > 100) return "Must be a percentage from 0 to 100.";
  return n / 100;
}

/** The keys (object keys, record ids) of a list separated by commas or spaces: without blanks or repeats. */
export function keyList(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter((k) => k !== ""))];
}

/**
 * The binding a form describes, on top of `current` (its key, prompt and required permission
 * are kept) with `modelPin` (null: the workspace's only pin) — or the problems by field.
 * A blank scope, ceiling or suite is an unset option (None): left out of the binding, which the
 * kernel reads as null.
 */
export function bindingOfForm(
  form: BindingForm,
  current: CapabilityBinding,
  modelPin: string | null,
): { binding: CapabilityBinding; errors?: undefined } | { binding?: undefined; errors: BindingErrors } {
  const errors: BindingErrors = {};
  const int = (f: "timeoutMs" | "connectTimeoutMs" | "maxOutputTokens" | "projectionTokens" | "concurrency" | "perMinute", max: number): number => {
    const v = positiveInteger(form[f], max);
    if (typeof v === "string") errors[f] = v;
    return typeof v === "number" ? v : 0;
  };
  const amount = (f: "perInvocation" | "perUserPerDay" | "workspacePerMonth"): number | null => {
    const v = ceiling(form[f]);
    if (typeof v === "string") errors[f] = v;
    return typeof v === "number" ? v : null;
  };
  if (!AUTONOMIES.some((a) => a.value === form.autonomy)) errors.autonomy = "Choose read only, propose or auto-apply.";
  const timeoutMs = int("timeoutMs", Number.MAX_SAFE_INTEGER);
  const connectTimeoutMs = int("connectTimeoutMs", U32_MAX);
  const maxOutputTokens = int("maxOutputTokens", U32_MAX);
  const projectionTokens = int("projectionTokens", Number.MAX_SAFE_INTEGER);
  const concurrency = int("concurrency", U32_MAX);
  const perMinute = int("perMinute", U32_MAX);
  const perInvocation = amount("perInvocation");
  const perUserPerDay = amount("perUserPerDay");
  const workspacePerMonth = amount("workspacePerMonth");
  const warn = share(form.warnAt);
  if (typeof warn === "string") errors.warnAt = warn;
  // Steps per turn (a capability of several steps, the assistant): blank = its own default.
  const steps = form.maxSteps.trim() === "" ? null : positiveInteger(form.maxSteps, 10);
  if (typeof steps === "string") errors.maxSteps = steps;
  if (Object.keys(errors).length) return { errors };

  const objects = keyList(form.objects);
  const evalSuite = form.evalSuite.trim();
  const budget: Budget = { warnAt: warn as number };
  if (perInvocation !== null) budget.perInvocation = perInvocation;
  if (perUserPerDay !== null) budget.perUserPerDay = perUserPerDay;
  if (workspacePerMonth !== null) budget.workspacePerMonth = workspacePerMonth;
  const settings: CapabilitySettings = {
    timeoutMs,
    connectTimeoutMs,
    maxOutputTokens,
    projectionTokens,
    budget,
    rate: { concurrency, perMinute },
  };
  if (objects.length) settings.objects = objects;
  if (evalSuite) settings.evalSuite = evalSuite;
  if (typeof steps === "number") settings.maxSteps = steps;
  const binding: CapabilityBinding = {
    key: current.key,
    prompt: current.prompt,
    requiredPermission: current.requiredPermission,
    autonomy: form.autonomy,
    settings,
  };
  if (modelPin !== null) binding.modelPin = modelPin;
  return { binding };
}

/** Where a kernel error goes on the binding form: `field` or a detail's path naming a field (its last segment), else a banner. */
export function bindingErrors(e: KernelError): { fields: BindingErrors; banner: string | null } {
  const fields: BindingErrors = {};
  const fieldOf = (path: string): BindingField | null => {
    const last = path.split(/[/.]/).filter(Boolean).pop() ?? "";
    return (BINDING_FIELDS as readonly string[]).includes(last) ? (last as BindingField) : null;
  };
  const own = e.field ? fieldOf(e.field) : null;
  if (own) fields[own] = e.message;
  for (const d of e.details ?? []) {
    const f = fieldOf(d.path);
    if (f && !fields[f]) fields[f] = d.message;
  }
  return { fields, banner: Object.keys(fields).length ? null : bannerText(e) };
}

/** A binding in words, for those who may not change it. */
export function bindingSummary(b: CapabilityBinding): { label: string; value: string }[] {
  const s = b.settings;
  const money = (n: number | null | undefined) => (n === null || n === undefined ? "no ceiling" : String(n));
  return [
    { label: "Autonomy", value: AUTONOMIES.find((a) => a.value === b.autonomy)?.label ?? b.autonomy },
    { label: "Objects in scope", value: s.objects?.length ? s.objects.join(", ") : "every object the user can read" },
    { label: "Timeout", value: `${s.timeoutMs.toLocaleString("en-US")} ms (connect ${s.connectTimeoutMs.toLocaleString("en-US")} ms)` },
    { label: "Max output tokens", value: s.maxOutputTokens.toLocaleString("en-US") },
    { label: "Projection tokens", value: s.projectionTokens.toLocaleString("en-US") },
    { label: "Rate per user", value: `${s.rate.concurrency} at a time, ${s.rate.perMinute} a minute` },
    {
      label: "Budgets",
      value: `per call ${money(s.budget.perInvocation)} · per user per day ${money(s.budget.perUserPerDay)} · workspace per month ${money(s.budget.workspacePerMonth)}`,
    },
    { label: "Warn at", value: `${shareText(s.budget.warnAt)} % of a ceiling` },
    { label: "Eval suite", value: s.evalSuite ?? "the most recently published suite" },
  ];
}

// ——— The suite editor: a suite's next version as a draft, and the revision it sends (only what changed).

/**
 * A suite being edited: its floor as a percentage as typed (`85`), each case's hard flag by id,
 * the ids of the cases removed, and the cases added.
 */
export type SuiteDraft = {
  floor: string;
  hard: Record<string, boolean>;
  removed: string[];
  added: SuiteCase[];
  /** The judged assertion's criteria, one per line (none: no judged assertion). */
  rubric?: string;
  /** Its floor as a percentage as typed. */
  judgedFloor?: string;
};

/** A draft that changes nothing yet. */
export function suiteDraft(suite: Pick<Suite<CaseOutline>, "floor" | "cases"> & Partial<Pick<Suite<CaseOutline>, "judged">>): SuiteDraft {
  const draft: SuiteDraft = { floor: shareText(suite.floor), hard: Object.fromEntries(suite.cases.map((c) => [c.id, c.hard])), removed: [], added: [] };
  if (suite.judged) {
    draft.rubric = suite.judged.rubric.join("\n");
    draft.judgedFloor = shareText(suite.judged.floor);
  }
  return draft;
}

/** The judged assertion a draft states: its criteria (blank lines dropped) and floor, `null`
 * for none, or the floor's problem. */
function draftJudged(draft: SuiteDraft): Judged | null | string {
  const rubric = (draft.rubric ?? "").split("\n").map((c) => c.trim()).filter((c) => c !== "");
  if (rubric.length === 0) return null;
  if (rubric.length > 8) return "A rubric has at most 8 criteria.";
  const floor = share(draft.judgedFloor ?? "");
  return typeof floor === "string" ? `Judged floor: ${floor}` : { rubric, floor };
}

/**
 * The revision a draft makes of `suite`, with only what changed (null: nothing), or the
 * floor's problem. `hard`, when sent, lists every kept case that is hard after the change (an
 * added case carries its own flag).
 */
export function suiteRevision(
  suite: Pick<Suite<CaseOutline>, "floor" | "cases"> & Partial<Pick<Suite<CaseOutline>, "judged">>,
  draft: SuiteDraft,
): { revision: SuiteRevision | null; problem?: undefined } | { revision?: undefined; problem: string } {
  const floor = share(draft.floor);
  if (typeof floor === "string") return { problem: floor };
  const judged = draftJudged(draft);
  if (typeof judged === "string") return { problem: judged };
  const remove = suite.cases.filter((c) => draft.removed.includes(c.id)).map((c) => c.id);
  const kept = suite.cases.filter((c) => !remove.includes(c.id));
  const hardNow = (c: CaseOutline) => draft.hard[c.id] ?? c.hard;
  const revision: SuiteRevision = { remove, add: draft.added };
  if (Math.abs(floor - suite.floor) > 1e-9) revision.floor = floor;
  if (kept.some((c) => hardNow(c) !== c.hard)) revision.hard = kept.filter(hardNow).map((c) => c.id);
  // The judged assertion: set or changed as the draft states it; removed as an empty rubric.
  const before = suite.judged ?? null;
  if (JSON.stringify(judged) !== JSON.stringify(before)) revision.judged = judged ?? { rubric: [], floor: 0 };
  const changed =
    revision.floor !== undefined || revision.hard !== undefined || revision.judged !== undefined || remove.length > 0 || draft.added.length > 0;
  return { revision: changed ? revision : null };
}

/** What an added case asks, as the cases table lists it: the question and the answer it expects (`… → invoice: inv_1, inv_2`), or the record. */
export function asksOf(c: Pick<SuiteCase, "input" | "expect">): string {
  const input = c.input as { question?: string; object?: string; id?: string };
  const expect = c.expect as { object?: string; expected_ids?: string[]; expect_refusal?: boolean };
  if (input.question === undefined) return `${input.object} ${input.id}`;
  const answer = expect.expect_refusal ? "a refusal" : expect.expected_ids?.length ? expect.expected_ids.join(", ") : "no records";
  return `${input.question} → ${expect.object}: ${answer}`;
}

/** Whether cases of a suite of this capability are added here: Extract cases need a document (the CLI adds them). */
export const addsCases = (capability: string): boolean => capability === "ask" || capability === "summarize";

/**
 * A case to add as its form holds it: who asks, the object, and for Ask the question and the
 * ids the answer lists (separated by commas or spaces) or that a refusal is expected; for
 * Summarize the record's id.
 */
export type CaseForm = { user: string; object: string; question: string; ids: string; refusal: boolean; record: string };

/**
 * The case a form adds to `suite`, in its capability's form, with an id neither the suite nor
 * the cases already added use (`ask-demo-27`) — or the form's problem. An Ask case expecting a
 * refusal is hard.
 */
export function newCase(
  suite: Pick<Suite<CaseOutline>, "key" | "capability" | "cases">,
  added: readonly SuiteCase[],
  form: CaseForm,
): { case: SuiteCase; problem?: undefined } | { case?: undefined; problem: string } {
  if (!addsCases(suite.capability)) return { problem: `${suite.capability} cases are added with countersign-cli eval publish.` };
  const user = form.user.trim();
  const object = form.object.trim();
  if (!user) return { problem: "Choose who asks." };
  if (!object) return { problem: "Name the object." };
  const taken = new Set([...suite.cases.map((c) => c.id), ...added.map((c) => c.id)]);
  let n = taken.size + 1;
  while (taken.has(`${suite.key}-${n}`)) n++;
  const id = `${suite.key}-${n}`;
  if (suite.capability === "summarize") {
    const record = form.record.trim();
    if (!record) return { problem: "Name the record to summarize." };
    return { case: { id, user, input: { object, id: record }, expect: { facts: [] }, hard: false } };
  }
  const question = form.question.trim();
  if (!question) return { problem: "Write the question." };
  const expect = form.refusal ? { object, expect_refusal: true } : { object, expected_ids: keyList(form.ids), ordered: false };
  return { case: { id, user, input: { question }, expect, hard: form.refusal } };
}
