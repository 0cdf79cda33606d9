// Pure helpers of the Proposals inbox and review screen (tested in proposals.test.ts).
import type { Proposal } from "../bindings/Proposal";
import type { ProposalState } from "../bindings/ProposalState";
import type { SourceSpan } from "../bindings/SourceSpan";

export const STATES: ProposalState[] = ["open", "accepted", "discarded", "expired", "undone"];

export type InboxFilter = { state: ProposalState | "all"; object: string; capability: string };

/** How many proposals are in each state, after the object and capability filters. */
export function countByState(list: Proposal[], filter: Omit<InboxFilter, "state">): Record<ProposalState | "all", number> {
  const out = { all: 0, open: 0, accepted: 0, discarded: 0, expired: 0, undone: 0 };
  for (const p of list) {
    if (filter.object && p.object !== filter.object) continue;
    if (filter.capability && p.capability !== filter.capability) continue;
    out[p.state] += 1;
    out.all += 1;
  }
  return out;
}

export function filterProposals(list: Proposal[], filter: InboxFilter): Proposal[] {
  return list.filter(
    (p) =>
      (filter.state === "all" || p.state === filter.state) &&
      (!filter.object || p.object === filter.object) &&
      (!filter.capability || p.capability === filter.capability),
  );
}

/** The UTF-16 index in `text` of the UTF-8 byte offset `byte` (the kernel's spans are bytes). */
export function utf8ToIndex(text: string, byte: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length && bytes < byte) {
    const cp = text.codePointAt(i)!;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

export type Piece = { text: string; mark: "" | "source" | "injection"; field?: string };

type Span = { start: number; end: number; mark: "source" | "injection"; field?: string };

/**
 * The document cut into pieces at the spans (UTF-8 byte offsets): the selected field's source
 * span and every instruction addressed to an AI. Overlaps: the earlier span wins.
 */
export function pieces(text: string, spans: Span[]): Piece[] {
  const sorted = spans
    .map((s) => ({ ...s, from: utf8ToIndex(text, s.start), to: utf8ToIndex(text, s.end) }))
    .filter((s) => s.to > s.from)
    .sort((a, b) => a.from - b.from);
  const out: Piece[] = [];
  let at = 0;
  for (const s of sorted) {
    if (s.from < at) continue;
    if (s.from > at) out.push({ text: text.slice(at, s.from), mark: "" });
    out.push({ text: text.slice(s.from, s.to), mark: s.mark, field: s.field });
    at = s.to;
  }
  if (at < text.length) out.push({ text: text.slice(at), mark: "" });
  return out;
}

/** A field's source span, if it has one, with where it is in the original document. */
export function spanOf(source: SourceSpan | undefined | null): { start: number; end: number; where: string } | null {
  if (!source) return null;
  const l = source.location;
  const where = !l
    ? ""
    : l.kind === "line"
      ? `line ${l.n}`
      : l.kind === "paragraph"
        ? `paragraph ${l.n}`
        : l.kind === "page"
          ? `page ${l.n}, line ${l.line}`
          : l.kind === "scan"
            ? `page ${l.n}, line ${l.line}, read by OCR`
            : `${l.name} header`;
  return { start: source.start, end: source.end, where };
}

/** "uncertain" below 0.6, "likely" below 0.9, else "confident". */
export function confidenceLabel(c: number | undefined): string {
  if (c === undefined) return "";
  return c < 0.6 ? "uncertain" : c < 0.9 ? "likely" : "confident";
}

/**
 * Uncertain first: fields with a problem, then by confidence ascending, fields of unknown
 * confidence last; otherwise in the order given (the kernel's layout order). Does not change
 * `fields`.
 */
export function uncertainFirst<T extends { confidence?: number; problem?: string }>(fields: readonly T[]): T[] {
  const rank = (f: T) => [f.problem ? 0 : 1, f.confidence ?? Number.POSITIVE_INFINITY] as const;
  return fields
    .map((f, i) => ({ f, i, r: rank(f) }))
    .sort((a, b) => a.r[0] - b.r[0] || (a.r[1] === b.r[1] ? 0 : a.r[1] < b.r[1] ? -1 : 1) || a.i - b.i)
    .map((x) => x.f);
}

/**
 * The child rows to accept, from the reviewer's checkboxes: null when every row is checked (the
 * kernel accepts them all), else the indexes of the checked rows (possibly none).
 */
export function rowsToSend(checked: readonly boolean[]): number[] | null {
  if (checked.every(Boolean)) return null;
  return checked.flatMap((c, i) => (c ? [i] : []));
}

/** The columns of a table of child rows: the fields any row proposes, in the object's order. */
export function lineColumns(rows: readonly { fields: readonly { field: string }[] }[], order: readonly string[]): string[] {
  const present = new Set(rows.flatMap((r) => r.fields.map((f) => f.field)));
  const known = order.filter((k) => present.has(k));
  const rest = [...present].filter((k) => !order.includes(k));
  return [...known, ...rest];
}
