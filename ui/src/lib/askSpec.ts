// Editing an Ask answer's query spec as chips: the top-level conditions of `filters`.
import type { Condition } from "../bindings/Condition";
import type { QuerySpec } from "../bindings/QuerySpec";
import type { Resolution } from "../bindings/Resolution";
import type { Candidate } from "../bindings/Candidate";
import type { FieldType } from "../bindings/FieldType";
import type { JsonValue } from "../bindings/serde_json/JsonValue";
import type { DateChoice } from "../bindings/DateChoice";
import type { ObjectView } from "../bindings/ObjectView";
import type { TermChoice } from "../bindings/TermChoice";
import type { ReadCondition } from "../bindings/ReadCondition";

/** The conditions shown as chips (an `all` is split; anything else is one chip). */
export function chips(spec: QuerySpec): Condition[] {
  const f = spec.filters;
  if (!f) return [];
  return "all" in f ? [...f.all] : [f];
}

/** The spec with these chips as its filters. */
export function withChips(spec: QuerySpec, list: Condition[]): QuerySpec {
  const { filters: _f, ...rest } = spec;
  if (list.length === 0) return rest;
  return { ...rest, filters: list.length === 1 ? list[0] : { all: list } };
}

const OPS: { [op: string]: string } = {
  eq: "=", ne: "≠", lt: "<", lte: "≤", gt: ">", gte: "≥", in: "is one of", contains: "contains", matches: "mentions",
  is_set: "is set", is_blank: "is blank",
};

/** A record id a resolution matched, shown by its name. */
export function nameOf(resolutions: Resolution[], value: JsonValue): string {
  for (const r of resolutions) for (const m of r.matches) if (m.id && m.id === value) return m.name;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The date phrase a chip's range came from, if it did: the comparisons on one field whose
 * bounds are the phrase's first day (`≥`) and last day (`≤`, or `<` the next day's start). */
export function datePhraseOf(c: Condition, dates: DateChoice[]): DateChoice | null {
  const parts: Condition[] = "all" in c ? c.all : [c];
  if (parts.length === 0 || !parts.every((p) => "field" in p)) return null;
  const cmps = parts as Extract<Condition, { field: string }>[];
  const field = cmps[0].field;
  if (!cmps.every((p) => p.field === field)) return null;
  const day = (v: JsonValue | undefined) => (typeof v === "string" ? v.slice(0, 10) : "");
  return (
    dates.find((d) => {
      if (d.field !== field) return false;
      const bounds = (d.start ? 1 : 0) + (d.end ? 1 : 0);
      if (cmps.length !== bounds) return false;
      const from = cmps.find((p) => p.op === "gte");
      const to = cmps.find((p) => p.op === "lte" || p.op === "lt");
      const ends = to !== undefined && (to.op === "lt" || day(to.value) === d.end);
      return (!d.start || day(from?.value) === d.start) && (!d.end || ends);
    }) ?? null
  );
}

/** Whether two JSON values are the same (objects compare by their keys, in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const ka = Object.keys(a).filter((k) => (a as { [k: string]: unknown })[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as { [k: string]: unknown })[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameJson((a as { [k: string]: unknown })[k], (b as { [k: string]: unknown })[k]));
}

/** The term a chip stands for: the one whose condition is the chip's. */
export function termOf(c: Condition, terms: TermChoice[]): TermChoice | null {
  return terms.find((t) => sameJson(t.condition, c)) ?? null;
}

/** The field paths a condition compares, in order (a compared other field too). */
export function fieldsOf(c: Condition): string[] {
  if ("all" in c) return c.all.flatMap(fieldsOf);
  if ("any" in c) return c.any.flatMap(fieldsOf);
  if ("not" in c) return fieldsOf(c.not);
  // A related condition's fields are the related object's.
  if ("related" in c) return [];
  return c.otherField ? [c.field, c.otherField] : [c.field];
}

export type Chip = { field: string; op: string; text: string; term?: TermChoice };

/** `{field, op, text}` of a chip; a `not in` is one chip too; a date range reads as the
 * question's phrase ("due date during March 2026"); a term's condition reads as the term
 * ("is Open opportunity", with the term). */
export function describeChip(
  c: Condition,
  resolutions: Resolution[],
  label: (field: string, value: string) => string = (_f, v) => v,
  dates: DateChoice[] = [],
  terms: TermChoice[] = [],
): Chip | null {
  const term = termOf(c, terms);
  if (term) return { field: fieldsOf(term.condition)[0] ?? term.key, op: "is", text: term.label, term };
  const date = datePhraseOf(c, dates);
  if (date) return { field: date.field, op: "during", text: date.phrase };
  let negate = false;
  let cmp: Condition = c;
  if ("not" in cmp) {
    negate = true;
    cmp = cmp.not;
  }
  if (!("field" in cmp)) return null;
  const v = cmp.value;
  const field = cmp.field;
  const show = (x: JsonValue) => label(field, nameOf(resolutions, x));
  const text = v === undefined ? "" : Array.isArray(v) ? v.map(show).join(", ") : show(v);
  const op = (negate ? "not " : "") + (OPS[cmp.op] ?? cmp.op);
  return { field: cmp.field, op, text };
}

/** A condition as text, its comparisons read as chips ("Stage is one of Prospecting,
 * Qualification"); an `all` joins them with "and", an `any` with "or". */
export function conditionText(
  c: Condition,
  fieldLabel: (path: string) => string = (p) => p,
  label: (field: string, value: string) => string = (_f, v) => v,
  resolutions: Resolution[] = [],
): string {
  const inner = (x: Condition) => {
    const t = conditionText(x, fieldLabel, label, resolutions);
    return "all" in x || "any" in x ? `(${t})` : t;
  };
  if ("all" in c) return c.all.map(inner).join(" and ");
  if ("any" in c) return c.any.map(inner).join(" or ");
  if ("related" in c) return relatedText(c.related, label, resolutions);
  if ("field" in c && c.otherField) return `${fieldLabel(c.field)} ${OPS[c.op] ?? c.op} ${fieldLabel(c.otherField)}`;
  if ("not" in c && !("field" in c.not)) return `not ${inner(c.not)}`;
  const d = describeChip(c, resolutions, label);
  return d ? `${fieldLabel(d.field)} ${d.op}${d.text ? ` ${d.text}` : ""}` : JSON.stringify(c);
}

/** A condition on related records as text: "has no note", "has at least 5 contact",
 * "has invoice (Status = Overdue)". */
export function relatedText(
  r: Extract<Condition, { related: unknown }>["related"],
  label: (field: string, value: string) => string = (_f, v) => v,
  resolutions: Resolution[] = [],
): string {
  const what = r.object.replace(/_/g, " ");
  const has = r.has === "none" ? "has no" : r.has === "at_least" ? `has at least ${r.count ?? 1}` : "has";
  // The filter's fields are the related object's: shown by their keys.
  const where = r.filter ? ` (${conditionText(r.filter, (p) => p.replace(/_/g, " "), label, resolutions)})` : "";
  return `${has} ${what}${where}`;
}

/** The other readings of the words a chip's condition was read from (a department or a
 * title for "engineers"): the swaps the chip offers. */
export function swapsFor(c: Condition, read: ReadCondition[]): ReadCondition[] {
  const chosen = read.find((r) => r.chosen && r.condition !== undefined && sameJson(r.condition, c));
  if (!chosen) return [];
  return read.filter((r) => !r.chosen && r.words === chosen.words && r.condition !== undefined);
}

/** A field path's label on this object (a parent's field after its lookup's label). */
export function fieldLabel(view: ObjectView | null, path: string): string {
  const [head, rest] = path.split(".");
  const f = view?.fields.find((x) => x.key === head);
  if (!f) return path;
  return rest && rest !== "name" && rest !== f.target ? `${f.label} › ${rest.replace(/_/g, " ")}` : f.label;
}

/** A picklist value of this object's field by its label (others as they are). */
export function valueLabel(view: ObjectView | null, path: string, value: string): string {
  if (path.includes(".")) return value;
  return view?.fields.find((x) => x.key === path)?.values?.find((v) => v.value === value)?.label ?? value;
}

/** Typed text → the value of a chip for a field of this type (lists are comma-separated). */
export function parseChipValue(text: string, type: FieldType | undefined, list: boolean): JsonValue {
  const one = (t: string): JsonValue => {
    const s = t.trim();
    if (type === "number" || type === "currency") {
      const n = Number(s.replace(/[, _]/g, ""));
      return Number.isFinite(n) ? n : s;
    }
    if (type === "boolean") return /^(true|yes|1)$/i.test(s);
    return s;
  };
  return list ? text.split(",").map(one).filter((x) => x !== "") : one(text);
}

/** Replace chip `i`'s value (keeping its field and op). */
export function setChipValue(c: Condition, value: JsonValue): Condition {
  if ("not" in c && "field" in c.not) return { not: { ...c.not, value } };
  if ("field" in c) return { ...c, value };
  return c;
}

/** The answer after the user chose one candidate of an ambiguous value: the filter listing
 * the candidates (by id for lookups, by name for name fields) becomes `field = choice`. */
export function choose(spec: QuerySpec, r: Resolution, choice: Candidate): QuerySpec {
  const ids = new Set(r.matches.map((m) => m.id));
  const names = new Set(r.matches.map((m) => m.name));
  const list = chips(spec).map((c) => {
    if (!("field" in c) || !Array.isArray(c.value)) return c;
    const vals = c.value as JsonValue[];
    if (vals.some((v) => typeof v === "string" && ids.has(v))) return { field: c.field, op: "eq" as const, value: choice.id };
    if (vals.some((v) => typeof v === "string" && names.has(v))) return { field: c.field, op: "eq" as const, value: choice.name };
    return c;
  });
  return withChips(spec, list);
}
