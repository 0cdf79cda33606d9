// The AI studio's pure logic (tested in studio.test.ts): a run's figures as the history shows
// them, the default candidate of a suite run, the eval gate's refusal as a list of failing
// cases, and the two versions a prompt diff compares.
import type { CaseResult } from "../bindings/CaseResult";
import type { Error as KernelError } from "../bindings/Error";
import type { EvalRun } from "../bindings/EvalRun";
import type { GateDecision } from "../bindings/GateDecision";
import type { PromptVersion } from "../bindings/PromptVersion";
import type { StudioCapability } from "../bindings/StudioCapability";
import type { Suite } from "../bindings/Suite";
import type { CaseOutline } from "../bindings/CaseOutline";
import type { SuiteProgress } from "../bindings/SuiteProgress";

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

/** A run's cases that did not pass, hard ones first. */
export function failingCases(run: Pick<EvalRun, "cases">): CaseResult[] {
  const failing = run.cases.filter((c) => !c.pass);
  return [...failing.filter((c) => c.hard), ...failing.filter((c) => !c.hard)];
}

/** A suite's size: its cases and how many of them are hard. */
export function caseCounts(suite: Pick<Suite<CaseOutline>, "cases">): { cases: number; hard: number } {
  return { cases: suite.cases.length, hard: suite.cases.filter((c) => c.hard).length };
}

/** One judged case as the live progress shows it. */
export function progressLine(p: Pick<SuiteProgress, "result">): string {
  const r = p.result;
  const verdict = r.pass ? "PASS" : "FAIL";
  const hard = r.hard ? " (hard)" : "";
  const why = !r.pass && r.reason ? ` — ${r.reason}` : "";
  return `${verdict} ${r.id}${hard} · ${seconds(r.wallMs)}${why}`;
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
