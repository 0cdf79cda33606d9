// The query spec behind an object list: columns, search, sort and one page (keyset: `after`).
import type { QuerySpec } from "../bindings/QuerySpec";
import type { SortKey } from "../bindings/SortKey";
import type { Condition } from "../bindings/Condition";
import type { Cursor } from "../bindings/Cursor";

export const PAGE = 200;

export type ListState = {
  object: string;
  columns: string[];
  /** Text searched in every text field the user reads (the spec's `search`). */
  search: string;
  sort: SortKey[];
  /** Per-column filters: column → text (contains) or, for picklists and booleans, a value (eq). */
  columnFilters?: { [column: string]: { op: "contains" | "eq"; value: string | boolean } };
  /** Extra filter, e.g. a related list's parent link or a saved view's filters. */
  where?: Condition;
  /** The rows of a set opened from a summary's rollup citation; kept under a saved view's filters. */
  set?: Condition;
};

/** A set opened from a summary's rollup citation: its rows, what the fact is, and whose. */
export type SummarySet = { filter: Condition; label: string; recordName: string };

/** One page of the list: from its start, or after a cursor (a page's `next`, or the kernel's cursor at a scroll position). */
export function listSpec(s: ListState, after: Cursor | null, limit = PAGE): QuerySpec {
  const parts: Condition[] = [];
  if (s.set) parts.push(s.set);
  if (s.where) parts.push(s.where);
  for (const [field, f] of Object.entries(s.columnFilters ?? {})) {
    if (f.value === "") continue;
    parts.push({ field, op: f.op, value: typeof f.value === "string" && f.op === "contains" ? f.value.trim() : f.value });
  }
  const spec: QuerySpec = { object: s.object, fields: s.columns, sort: s.sort, limit };
  if (after) spec.after = after;
  const q = s.search.trim();
  if (q) spec.search = q;
  if (parts.length === 1) spec.filters = parts[0];
  if (parts.length > 1) spec.filters = { all: parts };
  return spec;
}

/** The spec for an export: the list as filtered and sorted, without paging. */
export function exportSpec(s: ListState): QuerySpec {
  const { limit: _l, ...rest } = listSpec(s, null);
  return rest;
}

/** Clicking a column header: ascending, then descending, then unsorted. */
export function toggleSort(sort: SortKey[], field: string): SortKey[] {
  const cur = sort.find((k) => k.field === field);
  if (!cur) return [{ field, direction: "asc" }];
  if ((cur.direction ?? "asc") === "asc") return [{ field, direction: "desc" }];
  return [];
}
