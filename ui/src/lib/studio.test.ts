import { describe, expect, it } from "vitest";
import {
  activeVersion,
  addsCases,
  asksOf,
  bindingErrors,
  bindingForm,
  bindingOfForm,
  bindingSummary,
  caseCounts,
  costText,
  decisionBasis,
  defaultCandidate,
  diffPair,
  failingCases,
  fitnessHeading,
  fitnessRow,
  floorText,
  gateRefusal,
  keyList,
  newCase,
  percent,
  pinChoice,
  pinOfChoice,
  progressLine,
  runFigures,
  shareText,
  suiteDraft,
  suiteRevision,
  toggleChoice,
  when,
} from "./studio";
import type { CapabilityBinding } from "../bindings/CapabilityBinding";
import type { CaseOutline } from "../bindings/CaseOutline";
import type { CaseResult } from "../bindings/CaseResult";
import type { EvalRun } from "../bindings/EvalRun";
import type { PromptVersion } from "../bindings/PromptVersion";
import type { Suite } from "../bindings/Suite";

// Over IPC a version is a JSON number, whatever the generated type says.
const version = (n: number, active = false): PromptVersion =>
  ({ prompt: "ask", version: n as unknown as bigint, instructions: `v${n}`, examples: [], inputs: {}, outputContract: "schemas/ask", publishedAt: "2025-03-01T10:00:00Z", publishedBy: "ava", active, variants: {} }) as PromptVersion;

const result = (id: string, pass: boolean, hard = false, reason = ""): CaseResult => ({ id, pass, hard, reason, wallMs: 1234 });

const run = (over: Partial<EvalRun> = {}): EvalRun => ({
  id: "evalrun_1",
  suite: "ask-core",
  suiteVersion: 1,
  capability: "ask",
  prompt: "ask",
  promptVersion: 3,
  modelPin: "qwen",
  modelVersion: "sha256:abc",
  startedBy: "ava",
  startedAt: "2025-03-01T10:00:00Z",
  finishedAt: "2025-03-01T10:04:30Z",
  outcome: "failed",
  passed: 7,
  total: 8,
  hardFailures: 1,
  floor: 0.8,
  p50Ms: 1530,
  promptTokens: 10000,
  completionTokens: 2345,
  cost: 0.00123,
  cases: [result("a1", true), result("a2", false, false, "wrong filter"), result("a3", false, true, "reads a field it may not")],
  ...over,
});

describe("the run candidate", () => {
  it("defaults to the active version on the current model", () => {
    const cap = { versions: [version(1), version(2, true), version(3)], model: "qwen" };
    expect(activeVersion(cap)).toBe(2);
    expect(defaultCandidate(cap, ["llama", "qwen"])).toEqual({ promptVersion: 2, modelPin: "qwen" });
  });

  it("takes the newest version without an active one, and the first pin without a model", () => {
    const cap = { versions: [version(1), version(2)] };
    expect(defaultCandidate(cap, ["llama", "qwen"])).toEqual({ promptVersion: 2, modelPin: "llama" });
    expect(defaultCandidate({ versions: [] }, [])).toEqual({ promptVersion: null, modelPin: null });
  });
});

describe("a run's figures", () => {
  it("reads as the history shows it", () => {
    expect(runFigures(run())).toEqual({
      when: "2025-03-01 10:04",
      version: "v3",
      model: "qwen",
      outcome: "failed",
      passed: "7/8 (88 %)",
      hardFailures: 1,
      p50: "1.5 s",
      tokens: "12,345",
      cost: "0.0012",
    });
  });

  it("shows an empty run without dividing by nothing", () => {
    const f = runFigures(run({ passed: 0, total: 0, cost: 0, p50Ms: 0, promptTokens: 0, completionTokens: 0, outcome: "cancelled", cases: [] }));
    expect([f.passed, f.cost, f.p50, f.tokens, f.outcome]).toEqual(["0/0 (—)", "0", "0.0 s", "0", "cancelled"]);
  });

  it("formats shares, floors, costs and times", () => {
    expect(percent(1, 3)).toBe("33 %");
    expect(floorText(0.8)).toBe("80 %");
    expect(costText(1.5)).toBe("1.50");
    expect(costText(0.005)).toBe("0.0050");
    expect(when("2025-03-01T10:04:30Z")).toBe("2025-03-01 10:04");
  });

  it("lists the failing cases, hard ones first", () => {
    expect(failingCases(run()).map((c) => c.id)).toEqual(["a3", "a2"]);
    expect(failingCases(run({ cases: [result("a1", true)] }))).toEqual([]);
  });

  it("counts a suite's cases and hard cases", () => {
    const cases = [
      { id: "a", user: "ava", hard: true, asks: "q" },
      { id: "b", user: "ava", hard: false, asks: "q" },
      { id: "c", user: "ben", hard: true, asks: "q" },
    ];
    expect(caseCounts({ cases })).toEqual({ cases: 3, hard: 2 });
  });
});

describe("the live progress", () => {
  it("says PASS or FAIL for each judged case, with why it failed", () => {
    expect(progressLine({ result: result("a1", true, false, "checked the filter") })).toBe("PASS a1 · 1.2 s");
    expect(progressLine({ result: result("a3", false, true, "reads a field it may not") })).toBe("FAIL a3 (hard) · 1.2 s — reads a field it may not");
  });
});

describe("the model fitness check", () => {
  it("says which suite it is on and how far", () => {
    expect(fitnessHeading({ suite: "ask-demo", done: 3, total: 26 })).toBe("suite ask-demo 3/26 …");
  });

  it("sets the candidate's figures beside the current model's", () => {
    const row = fitnessRow({
      capability: "ask",
      suite: "ask-core",
      candidate: run({ modelPin: "llama", outcome: "passed", passed: 8, total: 8, p50Ms: 2500 }),
      current: run(),
    });
    expect(row).toEqual({
      capability: "ask",
      suite: "ask-core",
      candidate: { model: "llama", outcome: "passed", passed: "8/8 (100 %)", p50: "2.5 s" },
      current: { model: "qwen", outcome: "failed", passed: "7/8 (88 %)", p50: "1.5 s" },
    });
  });

  it("has no current figures when the current model has no run of the suite", () => {
    const row = fitnessRow({ capability: "extract", suite: "extract-core", candidate: run({ outcome: "cancelled", passed: 0, total: 0, p50Ms: 0 }) });
    expect(row.current).toBeNull();
    expect(row.candidate).toEqual({ model: "qwen", outcome: "cancelled", passed: "0/0 (—)", p50: "0.0 s" });
  });
});

describe("the gate's refusal", () => {
  it("lists the failing cases of an eval.gate error", () => {
    const refusal = gateRefusal({
      code: "eval.gate",
      fault: "admin",
      message: "activate prompt ask version 3: suite `ask-core` failed",
      retriable: false,
      details: [
        { path: "a2", message: "wrong filter" },
        { path: "a3", message: "hard assertion: reads a field it may not" },
      ],
    });
    expect(refusal).toEqual({
      message: "activate prompt ask version 3: suite `ask-core` failed",
      cases: [
        { id: "a2", why: "wrong filter", hard: false },
        { id: "a3", why: "reads a field it may not", hard: true },
      ],
    });
  });

  it("has no cases when there is no run, and is nothing for another error", () => {
    expect(gateRefusal({ code: "eval.gate", fault: "admin", message: "no run", retriable: false })).toEqual({ message: "no run", cases: [] });
    expect(gateRefusal({ code: "permission", fault: "user", message: "no", retriable: false })).toBeNull();
  });

  it("names how a decision was let through", () => {
    expect(decisionBasis({ overridden: false, runId: "evalrun_7" })).toBe("evalrun_7");
    expect(decisionBasis({ overridden: true, reason: "hotfix for a customer", runId: "evalrun_8" })).toBe("overridden: hotfix for a customer");
  });
});

describe("choosing versions to compare", () => {
  it("keeps at most two, older first in the diff", () => {
    let chosen = toggleChoice([], 3);
    expect(diffPair(chosen)).toBeNull();
    chosen = toggleChoice(chosen, 1);
    expect(diffPair(chosen)).toEqual([1, 3]);
    chosen = toggleChoice(chosen, 2);
    expect(chosen).toEqual([1, 2]);
    chosen = toggleChoice(chosen, 1);
    expect(chosen).toEqual([2]);
  });

  it("holds the workspace's only pin as the empty choice", () => {
    expect(pinChoice(undefined)).toBe("");
    expect(pinOfChoice("")).toBeNull();
    expect(pinOfChoice(pinChoice("qwen"))).toBe("qwen");
  });
});

describe("the binding form", () => {
  const binding = (over: Partial<CapabilityBinding["settings"]> = {}): CapabilityBinding => ({
    key: "ask",
    prompt: "ask",
    modelPin: "qwen",
    requiredPermission: "ai.use",
    autonomy: "propose",
    settings: {
      timeoutMs: 120000,
      connectTimeoutMs: 3000,
      maxOutputTokens: 200,
      projectionTokens: 2000,
      budget: { perInvocation: 0.05, perUserPerDay: 2, workspacePerMonth: 150.5, warnAt: 0.8 },
      rate: { concurrency: 2, perMinute: 30 },
      objects: ["account", "contact"],
      evalSuite: "ask-core",
      ...over,
    },
  });

  it("shows a binding as text, the warning share as a percentage", () => {
    expect(bindingForm(binding())).toEqual({
      autonomy: "propose",
      objects: "account, contact",
      timeoutMs: "120000",
      connectTimeoutMs: "3000",
      maxOutputTokens: "200",
      projectionTokens: "2000",
      maxSteps: "",
      concurrency: "2",
      perMinute: "30",
      perInvocation: "0.05",
      perUserPerDay: "2",
      workspacePerMonth: "150.5",
      warnAt: "80",
      evalSuite: "ask-core",
    });
    expect(shareText(0.07)).toBe("7");
    expect(shareText(0.125)).toBe("12.5");
  });

  it("round-trips a binding", () => {
    const b = binding();
    expect(bindingOfForm(bindingForm(b), b, "qwen")).toEqual({ binding: b });
    const bare = binding({ budget: { warnAt: 0.07 }, objects: undefined, evalSuite: undefined });
    delete bare.settings.objects;
    delete bare.settings.evalSuite;
    expect(bindingOfForm(bindingForm(bare), bare, "qwen")).toEqual({ binding: bare });
  });

  it("keeps the assistant's steps per turn: blank is its default, 1 to 10 otherwise", () => {
    const b = binding({ maxSteps: 3 });
    expect(bindingForm(b).maxSteps).toBe("3");
    expect(bindingOfForm(bindingForm(b), b, "qwen").binding?.settings.maxSteps).toBe(3);
    expect(bindingOfForm({ ...bindingForm(b), maxSteps: "" }, b, "qwen").binding?.settings.maxSteps).toBeUndefined();
    expect(bindingOfForm({ ...bindingForm(b), maxSteps: "11" }, b, "qwen").errors?.maxSteps).toMatch(/at most 10/);
  });

  it("reads the kernel's nulls as blanks", () => {
    const b = binding({ budget: { perInvocation: null, warnAt: 0.5 }, objects: null, evalSuite: null } as unknown as Partial<CapabilityBinding["settings"]>);
    const form = bindingForm(b);
    expect([form.objects, form.perInvocation, form.perUserPerDay, form.evalSuite, form.warnAt]).toEqual(["", "", "", "", "50"]);
  });

  it("turns blanks into unset options (None), and keeps the model pin it is given", () => {
    const b = binding();
    const form = { ...bindingForm(b), objects: " , ", perInvocation: "", perUserPerDay: " ", workspacePerMonth: "", evalSuite: "  " };
    const out = bindingOfForm(form, b, null).binding!;
    expect(out.modelPin ?? null).toBeNull();
    expect(out.settings.objects ?? null).toBeNull();
    expect(out.settings.evalSuite ?? null).toBeNull();
    expect(out.settings.budget).toEqual({ warnAt: 0.8 });
    // An unset option is left out: over IPC the kernel reads it as None.
    expect(JSON.parse(JSON.stringify(out.settings))).not.toHaveProperty("objects");
    expect(Object.keys(out)).not.toContain("modelPin");
  });

  it("changes what the form changes: autonomy, scope, figures, model", () => {
    const b = binding();
    const form = { ...bindingForm(b), autonomy: "auto_apply" as const, objects: "deal,  account, deal", timeoutMs: " 60000 ", warnAt: "95", perInvocation: "0" };
    const out = bindingOfForm(form, b, "llama").binding!;
    expect(out.autonomy).toBe("auto_apply");
    expect(out.modelPin).toBe("llama");
    expect(out.settings.objects).toEqual(["deal", "account"]);
    expect(out.settings.timeoutMs).toBe(60000);
    expect(out.settings.budget.warnAt).toBe(0.95);
    expect(out.settings.budget.perInvocation).toBe(0);
    expect([out.key, out.prompt, out.requiredPermission]).toEqual(["ask", "ask", "ai.use"]);
  });

  it("refuses invalid numbers, naming each field", () => {
    const b = binding();
    const form = {
      ...bindingForm(b),
      timeoutMs: "1.5",
      connectTimeoutMs: "0",
      maxOutputTokens: "",
      projectionTokens: "-3",
      concurrency: "two",
      perMinute: "99999999999",
      perInvocation: "-1",
      perUserPerDay: "abc",
      workspacePerMonth: "1e3",
      warnAt: "120",
    };
    const { binding: out, errors } = bindingOfForm(form, b, "qwen");
    expect(out).toBeUndefined();
    expect(Object.keys(errors ?? {}).sort()).toEqual(
      ["timeoutMs", "connectTimeoutMs", "maxOutputTokens", "projectionTokens", "concurrency", "perMinute", "perInvocation", "perUserPerDay", "workspacePerMonth", "warnAt"].sort(),
    );
    expect(errors?.timeoutMs).toMatch(/whole number/);
    expect(errors?.perMinute).toMatch(/at most/);
    expect(errors?.warnAt).toMatch(/0 to 100/);
    expect(bindingOfForm({ ...bindingForm(b), warnAt: "" }, b, null).errors).toEqual({ warnAt: expect.stringMatching(/Required/) });
    expect(bindingOfForm({ ...bindingForm(b), autonomy: "yolo" as never }, b, null).errors).toHaveProperty("autonomy");
  });

  it("accepts the edges: 0 % and 100 %, the largest u32", () => {
    const b = binding();
    expect(bindingOfForm({ ...bindingForm(b), warnAt: "0" }, b, null).binding?.settings.budget.warnAt).toBe(0);
    expect(bindingOfForm({ ...bindingForm(b), warnAt: "100" }, b, null).binding?.settings.budget.warnAt).toBe(1);
    expect(bindingOfForm({ ...bindingForm(b), concurrency: "4294967295" }, b, null).binding?.settings.rate.concurrency).toBe(4294967295);
    expect(bindingOfForm({ ...bindingForm(b), concurrency: "4294967296" }, b, null).errors).toHaveProperty("concurrency");
  });

  it("puts a kernel error on its field, or in the banner", () => {
    expect(bindingErrors({ code: "record.invalid_value", fault: "user", message: "no eval suite `x` for ask", field: "evalSuite", retriable: false })).toEqual({
      fields: { evalSuite: "no eval suite `x` for ask" },
      banner: null,
    });
    expect(
      bindingErrors({
        code: "definition.invalid",
        fault: "user",
        message: "bad settings",
        retriable: false,
        details: [
          { path: "/settings/rate/perMinute", message: "too many" },
          { path: "settings.budget.warnAt", message: "not a share" },
          { path: "/somewhere/else", message: "ignored" },
        ],
      }).fields,
    ).toEqual({ perMinute: "too many", warnAt: "not a share" });
    expect(bindingErrors({ code: "permission", fault: "user", message: "needs ai.manage", retriable: false })).toEqual({ fields: {}, banner: "needs ai.manage" });
  });

  it("sums a binding up in words", () => {
    const b = binding({ objects: undefined, evalSuite: undefined, budget: { warnAt: 0.8 } });
    const words = Object.fromEntries(bindingSummary(b).map((r) => [r.label, r.value]));
    expect(words["Objects in scope"]).toBe("every object the user can read");
    expect(words["Budgets"]).toBe("per call no ceiling · per user per day no ceiling · workspace per month no ceiling");
    expect(words["Warn at"]).toBe("80 % of a ceiling");
    expect(words["Eval suite"]).toBe("the most recently published suite");
    expect(words["Timeout"]).toBe("120,000 ms (connect 3,000 ms)");
  });
});

describe("the suite editor", () => {
  const outline = (id: string, hard = false): CaseOutline => ({ id, user: "ava", hard, asks: `question ${id}` });
  const suite = (over: Partial<Suite<CaseOutline>> = {}): Suite<CaseOutline> => ({
    key: "ask-demo",
    version: 3,
    capability: "ask",
    fixture: "demo",
    floor: 0.85,
    cases: [outline("ask-dev-01"), outline("ask-dev-02"), outline("ask-dev-26", true)],
    publishedAt: "2025-03-01T10:00:00Z",
    publishedBy: "ava",
    ...over,
  });
  const form = { user: " cara ", object: " invoice ", question: " Which invoices are paid? ", ids: "inv_0016, inv_0038  inv_0016,", refusal: false, record: "" };

  it("sets, changes and removes a judged assertion, one criterion per line", () => {
    const s = suite({ capability: "summarize" });
    const set = suiteRevision(s, { ...suiteDraft(s), rubric: "States the open pipeline.\n\n  Reads as fluent English. ", judgedFloor: "75" });
    expect(set).toEqual({ revision: { remove: [], add: [], judged: { rubric: ["States the open pipeline.", "Reads as fluent English."], floor: 0.75 } } });
    const judged = suite({ capability: "summarize", judged: { rubric: ["States the open pipeline."], floor: 0.75 } });
    expect(suiteRevision(judged, suiteDraft(judged))).toEqual({ revision: null });
    expect(suiteRevision(judged, { ...suiteDraft(judged), rubric: " " }).revision?.judged).toEqual({ rubric: [], floor: 0 });
    expect(suiteRevision(judged, { ...suiteDraft(judged), judgedFloor: "" }).problem).toMatch(/Judged floor: Required/);
  });

  it("sends nothing when nothing changed", () => {
    const s = suite();
    expect(suiteDraft(s)).toEqual({ floor: "85", hard: { "ask-dev-01": false, "ask-dev-02": false, "ask-dev-26": true }, removed: [], added: [] });
    expect(suiteRevision(s, suiteDraft(s))).toEqual({ revision: null });
    // The same floor written differently is the same floor.
    expect(suiteRevision(s, { ...suiteDraft(s), floor: " 85.0 " })).toEqual({ revision: null });
  });

  it("sends only a changed floor, as a share", () => {
    const s = suite();
    expect(suiteRevision(s, { ...suiteDraft(s), floor: "90" })).toEqual({ revision: { floor: 0.9, remove: [], add: [] } });
    expect(suiteRevision(s, { ...suiteDraft(s), floor: "0" }).revision?.floor).toBe(0);
  });

  it("refuses a floor that is not a percentage", () => {
    const s = suite();
    expect(suiteRevision(s, { ...suiteDraft(s), floor: "120" })).toEqual({ problem: expect.stringMatching(/0 to 100/) });
    expect(suiteRevision(s, { ...suiteDraft(s), floor: "" }).problem).toMatch(/Required/);
  });

  it("lists every case hard after a flag flips", () => {
    const s = suite();
    const draft = suiteDraft(s);
    draft.hard["ask-dev-01"] = true;
    expect(suiteRevision(s, draft)).toEqual({ revision: { hard: ["ask-dev-01", "ask-dev-26"], remove: [], add: [] } });
    draft.hard["ask-dev-26"] = false;
    expect(suiteRevision(s, draft).revision?.hard).toEqual(["ask-dev-01"]);
  });

  it("leaves a removed case out of the hard ones", () => {
    const s = suite();
    const draft = { ...suiteDraft(s), removed: ["ask-dev-26", "gone"] };
    expect(suiteRevision(s, draft)).toEqual({ revision: { remove: ["ask-dev-26"], add: [] } });
    draft.hard["ask-dev-02"] = true;
    expect(suiteRevision(s, draft)).toEqual({ revision: { hard: ["ask-dev-02"], remove: ["ask-dev-26"], add: [] } });
  });

  it("makes an Ask case with the ids its answer lists", () => {
    const s = suite();
    const out = newCase(s, [], form);
    expect(out).toEqual({
      case: {
        id: "ask-demo-4",
        user: "cara",
        input: { question: "Which invoices are paid?" },
        expect: { object: "invoice", expected_ids: ["inv_0016", "inv_0038"], ordered: false },
        hard: false,
      },
    });
    expect(asksOf(out.case!)).toBe("Which invoices are paid? → invoice: inv_0016, inv_0038");
    const draft = { ...suiteDraft(s), added: [out.case!] };
    expect(suiteRevision(s, draft)).toEqual({ revision: { remove: [], add: [out.case] } });
  });

  it("makes a hard Ask case when a refusal is expected", () => {
    const out = newCase(suite(), [], { ...form, refusal: true });
    expect(out.case?.expect).toEqual({ object: "invoice", expect_refusal: true });
    expect(out.case?.hard).toBe(true);
    expect(asksOf(out.case!)).toBe("Which invoices are paid? → invoice: a refusal");
  });

  it("gives each added case an id no other case has", () => {
    const s = suite({ cases: [outline("ask-dev-01"), outline("ask-demo-4"), outline("ask-demo-5")] });
    const first = newCase(s, [], form).case!;
    expect(first.id).toBe("ask-demo-6");
    expect(newCase(s, [first], form).case?.id).toBe("ask-demo-7");
  });

  it("makes a Summarize case of a record", () => {
    const s = suite({ key: "summarize-demo", capability: "summarize", cases: [] });
    const out = newCase(s, [], { ...form, record: " acc_0001 " });
    expect(out).toEqual({ case: { id: "summarize-demo-1", user: "cara", input: { object: "invoice", id: "acc_0001" }, expect: { facts: [] }, hard: false } });
    expect(asksOf(out.case!)).toBe("invoice acc_0001");
    expect(newCase(s, [], form).problem).toMatch(/record/);
  });

  it("says what a case lacks, and adds no Extract case", () => {
    const s = suite();
    expect(newCase(s, [], { ...form, user: "" }).problem).toMatch(/who asks/);
    expect(newCase(s, [], { ...form, object: " " }).problem).toMatch(/object/);
    expect(newCase(s, [], { ...form, question: "" }).problem).toMatch(/question/);
    expect(addsCases("ask") && addsCases("summarize")).toBe(true);
    expect(addsCases("extract")).toBe(false);
    expect(newCase(suite({ capability: "extract" }), [], form).problem).toMatch(/countersign-cli eval publish/);
  });

  it("reads a list of keys separated by commas or spaces", () => {
    expect(keyList(" inv_1,inv_2  inv_3 ,, inv_1 ")).toEqual(["inv_1", "inv_2", "inv_3"]);
    expect(keyList(" , ")).toEqual([]);
  });
});
