import { describe, expect, it } from "vitest";
import {
  actorOptions,
  allFree,
  budgetLines,
  budgetWarnings,
  capabilityOptions,
  dayList,
  defaultRange,
  duration,
  filterSpend,
  money,
  pickCurrency,
  proposalOf,
  spendSeries,
  spendSince,
  totals,
  validDay,
} from "./activity";
import type { SpendRow } from "../bindings/SpendRow";
import type { CapabilityBudget } from "../bindings/CapabilityBudget";
import type { TraceEntry } from "../bindings/TraceEntry";

const row = (day: string, capability: string, actor: string, cost: number, invocations = 1, currency = "USD"): SpendRow => ({
  day,
  capability,
  actor,
  invocations,
  promptTokens: 100 * invocations,
  completionTokens: 10 * invocations,
  cost,
  currency,
});

const budget = (capability: string, b: Partial<CapabilityBudget["budget"]>): CapabilityBudget => ({
  capability,
  budget: { warnAt: 0.8, ...b },
});

describe("date range", () => {
  it("defaults to the last 30 days, today included, in UTC", () => {
    expect(defaultRange(new Date("2025-03-10T23:30:00Z"))).toEqual({ since: "2025-02-09", until: "2025-03-10" });
    expect(dayList("2025-02-09", "2025-03-10")).toHaveLength(30);
  });

  it("lists every day across months and leap days", () => {
    expect(dayList("2024-02-27", "2024-03-01")).toEqual(["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"]);
    expect(dayList("2024-03-02", "2024-03-01")).toEqual([]);
    expect(dayList("", "2024-03-01")).toEqual([]);
    expect(dayList("2024-01-01", "2030-01-01", 10)).toHaveLength(10);
  });

  it("asks spend from the first of the month", () => {
    expect(spendSince("2025-02-09")).toBe("2025-02-01");
    expect(validDay("2025-2-3")).toBe(false);
  });
});

describe("currency", () => {
  it("picks the most used currency and names the others", () => {
    const rows = [row("2025-01-01", "ask", "ava", 1, 5, "EUR"), row("2025-01-01", "ask", "bo", 9, 2, "USD"), row("2025-01-02", "ask", "bo", 1, 1, "GBP")];
    expect(pickCurrency(rows, "USD")).toEqual({ currency: "EUR", others: ["USD", "GBP"] });
  });

  it("falls back to the workspace's currency without rows", () => {
    expect(pickCurrency([], "CHF")).toEqual({ currency: "CHF", others: [] });
  });
});

describe("series", () => {
  const rows = [
    row("2025-01-01", "ask", "ava", 0.5),
    row("2025-01-01", "extract", "ava", 1.5),
    row("2025-01-01", "ask", "bo", 0.25),
    row("2025-01-03", "ask", "ava", 1),
    row("2024-12-31", "ask", "ava", 7), // before the range
  ];
  const days = dayList("2025-01-01", "2025-01-03");

  it("groups cost per day by capability, zero on days without spend, largest first", () => {
    expect(spendSeries(rows, days, "capability", "cost")).toEqual({
      days,
      series: [
        { key: "ask", data: [0.75, 0, 1], total: 1.75 },
        { key: "extract", data: [1.5, 0, 0], total: 1.5 },
      ],
    });
  });

  it("groups invocations per day by user", () => {
    expect(spendSeries(rows, days, "actor", "invocations").series).toEqual([
      { key: "ava", data: [2, 0, 1], total: 3 },
      { key: "bo", data: [1, 0, 0], total: 1 },
    ]);
  });

  it("filters rows and counts totals", () => {
    const picked = filterSpend(rows, { since: "2025-01-01", until: "2025-01-02", actor: "ava" });
    expect(picked).toHaveLength(2);
    expect(totals([...picked, row("2025-01-01", "ask", "ava", 100, 1, "EUR")], "USD")).toEqual({
      invocations: 3,
      promptTokens: 300,
      completionTokens: 30,
      tokens: 330,
      cost: 2,
    });
  });

  it("knows when every call was free", () => {
    expect(allFree([row("2025-01-01", "ask", "ava", 0)])).toBe(true);
    expect(allFree(rows)).toBe(false);
    expect(allFree([])).toBe(true);
  });
});

describe("budgets", () => {
  it("draws one line per per-user daily ceiling", () => {
    const budgets = [budget("ask", { perUserPerDay: 2 }), budget("summarize", { perUserPerDay: 2 }), budget("extract", { perUserPerDay: 5 }), budget("x", {})];
    expect(budgetLines(budgets)).toEqual([
      { value: 2, capabilities: ["ask", "summarize"] },
      { value: 5, capabilities: ["extract"] },
    ]);
    expect(budgetLines(budgets, ["extract"])).toEqual([{ value: 5, capabilities: ["extract"] }]);
  });

  it("warns on a user's day over the warning share, all capabilities counted", () => {
    const rows = [
      row("2025-01-01", "ask", "ava", 0.9),
      row("2025-01-01", "extract", "ava", 0.8), // ava: 1.7 of 2 = 85%
      row("2025-01-01", "ask", "bo", 1.5), // bo: 75%
      row("2025-01-02", "ask", "bo", 2.5), // over
    ];
    const w = budgetWarnings(rows, [budget("ask", { perUserPerDay: 2 })], "2025-01-01", "2025-01-31");
    expect(w.map((x) => [x.day, x.actor, x.over])).toEqual([
      ["2025-01-01", "ava", false],
      ["2025-01-02", "bo", true],
    ]);
    expect(w[0].spent).toBeCloseTo(1.7);
  });

  it("warns once a month when the month to date reaches the share of a monthly ceiling", () => {
    const rows = [
      row("2025-01-03", "ask", "ava", 50), // before the range, same month
      row("2025-01-10", "ask", "bo", 35), // 85 of 100
      row("2025-01-12", "ask", "ava", 20), // 105: over
      row("2025-02-01", "ask", "ava", 10),
    ];
    const w = budgetWarnings(rows, [budget("ask", { workspacePerMonth: 100 })], "2025-01-05", "2025-02-28");
    expect(w).toEqual([
      { kind: "workspace-month", day: "2025-01-10", capability: "ask", spent: 105, ceiling: 100, warnAt: 0.8, over: true },
    ]);
  });

  it("ignores days outside the range, and ceilings of nothing", () => {
    const rows = [row("2025-01-01", "ask", "ava", 5)];
    expect(budgetWarnings(rows, [budget("ask", { perUserPerDay: 1 })], "2025-01-02", "2025-01-31")).toEqual([]);
    expect(budgetWarnings(rows, [budget("ask", { perUserPerDay: 0, workspacePerMonth: 0 })], "2025-01-01", "2025-01-31")).toEqual([]);
  });
});

describe("filter choices and entries", () => {
  it("offers the known capabilities and those seen", () => {
    const e = { capability: "classify" } as TraceEntry;
    expect(capabilityOptions([e], [row("2025-01-01", "translate", "ava", 0)], [], "z")).toEqual(["ask", "classify", "extract", "summarize", "translate", "z"]);
    expect(actorOptions(["bo", "ava", "bo", ""], "cy")).toEqual(["ava", "bo", "cy"]);
  });

  it("finds an Extract's proposal", () => {
    expect(proposalOf({ capability: "extract", result: { proposal: "p1" } })).toBe("p1");
    expect(proposalOf({ capability: "ask", result: { proposal: "p1" } })).toBeNull();
    expect(proposalOf({ capability: "extract", result: null })).toBeNull();
    expect(proposalOf({ capability: "extract" })).toBeNull();
  });

  it("formats money with small amounts precise, and latency", () => {
    expect(money(0.0123, "USD")).toMatch(/0\.0123/);
    expect(money(12, "USD")).toMatch(/12\.00/);
    expect(money(1, "not a code")).toMatch(/1\.00 not a code/);
    expect(duration(850)).toBe("850 ms");
    expect(duration(1234)).toBe("1.2 s");
    expect(duration(0)).toBe("—");
  });
});
