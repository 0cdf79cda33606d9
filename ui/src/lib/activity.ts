// The activity page's pure logic: date ranges, the spend rows grouped into chart series, the
// currency to chart, totals and budget warnings. Days are the kernel's: `YYYY-MM-DD` in UTC
// (a trace's day is the first ten characters of its UTC `startedAt`).
import type { SpendRow } from "../bindings/SpendRow";
import type { TraceEntry } from "../bindings/TraceEntry";
import type { CapabilityBudget } from "../bindings/CapabilityBudget";
import { locale } from "./format";

/** The capabilities always offered in the filter, whatever has been seen. */
export const CAPABILITIES = ["ask", "extract", "summarize"] as const;
export const OUTCOMES = ["answered", "refused", "failed", "abandoned", "running"] as const;
/** The longest range charted day by day (a longer one is cut at its end). */
export const MAX_DAYS = 731;

export type Range = { since: string; until: string };

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a moment, in UTC. */
export function isoDay(t: Date): string {
  return t.toISOString().slice(0, 10);
}

function parseDay(day: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const t = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(t) ? null : t;
}

export function validDay(day: string): boolean {
  return parseDay(day) !== null;
}

/** The last `days` days up to and including today (UTC). */
export function defaultRange(now: Date = new Date(), days = 30): Range {
  const until = isoDay(now);
  const since = isoDay(new Date(Date.parse(`${until}T00:00:00Z`) - (days - 1) * DAY_MS));
  return { since, until };
}

/** Every day from `since` to `until`, inclusive (empty if either is not a day or since > until). */
export function dayList(since: string, until: string, max = MAX_DAYS): string[] {
  const a = parseDay(since);
  const b = parseDay(until);
  if (a === null || b === null || a > b) return [];
  const out: string[] = [];
  for (let t = a; t <= b && out.length < max; t += DAY_MS) out.push(isoDay(new Date(t)));
  return out;
}

/**
 * The day to ask spend from: the first of `since`'s month, so a monthly ceiling can be checked
 * against the month's spend before the range starts.
 */
export function spendSince(since: string): string {
  return validDay(since) ? `${since.slice(0, 8)}01` : since;
}

/**
 * The currency to chart: the one with the most invocations (then the most cost), or `fallback`
 * when there are no rows; `others` are the currencies left out.
 */
export function pickCurrency(rows: readonly SpendRow[], fallback: string): { currency: string; others: string[] } {
  const by = new Map<string, { n: number; cost: number }>();
  for (const r of rows) {
    const c = by.get(r.currency) ?? { n: 0, cost: 0 };
    c.n += r.invocations;
    c.cost += r.cost;
    by.set(r.currency, c);
  }
  if (by.size === 0) return { currency: fallback, others: [] };
  const ranked = [...by.entries()].sort((x, y) => y[1].n - x[1].n || y[1].cost - x[1].cost || x[0].localeCompare(y[0]));
  return { currency: ranked[0][0], others: ranked.slice(1).map(([c]) => c) };
}

export type SpendFilter = { capability?: string; actor?: string; since?: string; until?: string; currency?: string };

/** The rows a filter picks (every part optional; days inclusive). */
export function filterSpend(rows: readonly SpendRow[], f: SpendFilter): SpendRow[] {
  return rows.filter(
    (r) =>
      (!f.capability || r.capability === f.capability) &&
      (!f.actor || r.actor === f.actor) &&
      (!f.since || r.day >= f.since) &&
      (!f.until || r.day <= f.until) &&
      (f.currency === undefined || r.currency === f.currency),
  );
}

/** Local models are free: nothing to chart in money, so chart invocations instead. */
export function allFree(rows: readonly SpendRow[]): boolean {
  return rows.every((r) => r.cost === 0);
}

export type Measure = "cost" | "invocations";
export type Series = { key: string; data: number[]; total: number };
export type Chart = { days: string[]; series: Series[] };

/**
 * One series per capability (or actor), one value per day of `days` (0 where nothing was
 * spent), largest total first. Rows on days outside `days` are left out.
 */
export function spendSeries(rows: readonly SpendRow[], days: readonly string[], by: "capability" | "actor", measure: Measure): Chart {
  const index = new Map(days.map((d, i) => [d, i]));
  const series = new Map<string, Series>();
  for (const r of rows) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    const key = r[by];
    let s = series.get(key);
    if (!s) {
      s = { key, data: days.map(() => 0), total: 0 };
      series.set(key, s);
    }
    const v = measure === "cost" ? r.cost : r.invocations;
    s.data[i] += v;
    s.total += v;
  }
  return {
    days: [...days],
    series: [...series.values()].sort((a, b) => b.total - a.total || a.key.localeCompare(b.key)),
  };
}

export type Totals = { invocations: number; promptTokens: number; completionTokens: number; tokens: number; cost: number };

/** Invocations and tokens of every row; cost of the rows in `currency` only. */
export function totals(rows: readonly SpendRow[], currency: string): Totals {
  const t: Totals = { invocations: 0, promptTokens: 0, completionTokens: 0, tokens: 0, cost: 0 };
  for (const r of rows) {
    t.invocations += r.invocations;
    t.promptTokens += r.promptTokens;
    t.completionTokens += r.completionTokens;
    if (r.currency === currency) t.cost += r.cost;
  }
  t.tokens = t.promptTokens + t.completionTokens;
  return t;
}

export type BudgetLine = { value: number; capabilities: string[] };

/**
 * The per-user daily ceilings to draw, one line per distinct value (capabilities sharing a
 * value share a line), of the capabilities in `only` (all when empty).
 */
export function budgetLines(budgets: readonly CapabilityBudget[], only: readonly string[] = []): BudgetLine[] {
  const by = new Map<number, string[]>();
  for (const b of budgets) {
    const v = b.budget.perUserPerDay;
    if (v === undefined || v === null || (only.length && !only.includes(b.capability))) continue;
    by.set(v, [...(by.get(v) ?? []), b.capability]);
  }
  return [...by.entries()].sort((a, b) => a[0] - b[0]).map(([value, capabilities]) => ({ value, capabilities: capabilities.sort() }));
}

export type BudgetWarning = {
  kind: "user-day" | "workspace-month";
  /** The day the share was reached (for a month: the first day month-to-date spend reached it). */
  day: string;
  /** The user, for a daily ceiling. */
  actor?: string;
  capability: string;
  /** Spent that day by that user (for a month: month to date, on `day`). */
  spent: number;
  ceiling: number;
  warnAt: number;
  /** Over the ceiling itself, not only over its warning share. */
  over: boolean;
};

/**
 * The days on which spend reached a ceiling's warning share (`warnAt`). As the kernel checks
 * them, a capability's per-user daily ceiling is compared with all that user's spend of the
 * day, and its monthly workspace ceiling with all the month's spend (month to date). `rows`
 * must be in the budgets' currency and start at the month's start for monthly sums to be
 * whole; only days from `since` to `until` are reported. Monthly warnings are one per month
 * and capability (the first day the share was reached, the most spent).
 */
export function budgetWarnings(rows: readonly SpendRow[], budgets: readonly CapabilityBudget[], since: string, until: string): BudgetWarning[] {
  const byUserDay = new Map<string, number>();
  const byDay = new Map<string, number>();
  for (const r of rows) {
    const k = `${r.day}\u0000${r.actor}`;
    byUserDay.set(k, (byUserDay.get(k) ?? 0) + r.cost);
    byDay.set(r.day, (byDay.get(r.day) ?? 0) + r.cost);
  }
  const inRange = (day: string) => day >= since && day <= until;
  const out: BudgetWarning[] = [];
  for (const { capability, budget } of budgets) {
    const share = budget.warnAt;
    const daily = budget.perUserPerDay;
    if (daily !== undefined && daily !== null && daily > 0) {
      for (const [k, spent] of byUserDay) {
        const [day, actor] = k.split("\u0000");
        if (inRange(day) && spent >= share * daily) {
          out.push({ kind: "user-day", day, actor, capability, spent, ceiling: daily, warnAt: share, over: spent > daily });
        }
      }
    }
    const monthly = budget.workspacePerMonth;
    if (monthly !== undefined && monthly !== null && monthly > 0) {
      const days = [...byDay.keys()].sort();
      let month = "";
      let sum = 0;
      let warned: BudgetWarning | null = null;
      for (const day of days) {
        if (day.slice(0, 7) !== month) {
          month = day.slice(0, 7);
          sum = 0;
          warned = null;
        }
        sum += byDay.get(day) ?? 0;
        if (day > until) continue;
        if (warned) {
          warned.spent = sum;
          warned.over = sum > monthly;
        } else if (inRange(day) && sum >= share * monthly) {
          warned = { kind: "workspace-month", day, capability, spent: sum, ceiling: monthly, warnAt: share, over: sum > monthly };
          out.push(warned);
        }
      }
    }
  }
  return out.sort((a, b) => a.day.localeCompare(b.day) || a.capability.localeCompare(b.capability) || (a.actor ?? "").localeCompare(b.actor ?? ""));
}

/** Filter choices: the known capabilities, those seen, and the one selected, sorted. */
export function capabilityOptions(entries: readonly TraceEntry[], spend: readonly SpendRow[], budgets: readonly CapabilityBudget[], selected = ""): string[] {
  const all = new Set<string>(CAPABILITIES);
  for (const e of entries) all.add(e.capability);
  for (const r of spend) all.add(r.capability);
  for (const b of budgets) all.add(b.capability);
  if (selected) all.add(selected);
  return [...all].sort();
}

/** Filter choices: the users seen in entries (and spend) so far, and the one selected, sorted. */
export function actorOptions(seen: Iterable<string>, selected = ""): string[] {
  const all = new Set(seen);
  if (selected) all.add(selected);
  all.delete("");
  return [...all].sort();
}

/** The proposal an Extract entry made (its result is `{"proposal": "<id>"}`), if any. */
export function proposalOf(entry: Pick<TraceEntry, "capability" | "result">): string | null {
  const r = entry.result;
  if (entry.capability !== "extract" || !r || typeof r !== "object" || Array.isArray(r)) return null;
  const id = (r as { [k: string]: unknown }).proposal;
  return typeof id === "string" && id && id !== "[hidden]" ? id : null;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** A cost in `currency`: small amounts with up to 4 decimals (model calls cost fractions of a cent). */
export function money(value: number, currency: string): string {
  const small = value !== 0 && Math.abs(value) < 1;
  const key = `${locale()}:${currency}:${small}`;
  let f = moneyFormats.get(key);
  if (!f) {
    try {
      f = new Intl.NumberFormat(locale(), { style: "currency", currency: currency || "XXX", minimumFractionDigits: 2, maximumFractionDigits: small ? 4 : 2 });
    } catch {
      // Not an ISO currency code: the number and the code as they are.
      f = new Intl.NumberFormat(locale(), { minimumFractionDigits: 2, maximumFractionDigits: small ? 4 : 2 });
      const plain = f;
      f = { format: (v: number) => `${plain.format(v)}${currency ? ` ${currency}` : ""}` } as Intl.NumberFormat;
    }
    moneyFormats.set(key, f);
  }
  return f.format(value);
}

const counts = new Map<string, Intl.NumberFormat>();

/** A whole number with the locale's grouping. */
export function count(n: number): string {
  const l = locale();
  let f = counts.get(l);
  if (!f) {
    f = new Intl.NumberFormat(l, { maximumFractionDigits: 0 });
    counts.set(l, f);
  }
  return f.format(n);
}

/** A latency: milliseconds under a second, seconds with one decimal above. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "—";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** A timestamp as shown in the list: `YYYY-MM-DD HH:MM UTC`. */
export function when(t: string): string {
  return t.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC");
}
