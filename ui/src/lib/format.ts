// How values are shown and how typed text becomes a value to save.
import type { FieldView } from "../bindings/FieldView";
import type { JsonValue } from "../bindings/serde_json/JsonValue";

const numberFormats = new Map<string, Intl.NumberFormat>();

/** The locale the workspace view says to write in (the user's own or the workspace's), if one
 * was chosen. */
let chosen: string | null = null;

/** Write values in `tag` from now on (`null`: the system's language, dates as stored). */
export function setLocale(tag: string | null): void {
  chosen = tag;
  numberFormats.clear();
  dateFormat = null;
}

/** The user's locale: the one chosen for them, else the system's; a bare "C"/POSIX environment
 * falls back to en-US rather than no grouping. */
export function locale(): string {
  if (chosen) return chosen;
  const l = typeof navigator !== "undefined" ? navigator.language : "";
  return l && /^[a-z]{2,3}(-|$)/i.test(l) && l !== "C" ? l : "en-US";
}

let dateFormat: Intl.DateTimeFormat | null = null;

/** A stored day (`2026-03-05`) as the chosen locale writes it ("5 Mar 2026", "05.03.2026");
 * with no locale chosen, as stored. */
export function formatDate(value: string): string {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : null;
  if (!chosen || !day || Number.isNaN(day.getTime())) return value;
  dateFormat ??= new Intl.DateTimeFormat(chosen, { dateStyle: "medium", timeZone: "UTC" });
  return dateFormat.format(day);
}

/** The locale's decimal mark ("." or ","). */
export function decimalMark(): string {
  return new Intl.NumberFormat(locale()).formatToParts(1.5).find((p) => p.type === "decimal")?.value ?? ".";
}

function numberFormat(scale: number, currency?: string): Intl.NumberFormat {
  const key = `${locale()}:${scale}:${currency ?? ""}`;
  let f = numberFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale(), {
      minimumFractionDigits: currency ? scale : 0,
      maximumFractionDigits: scale,
      ...(currency ? { style: "currency", currency } : {}),
    });
    numberFormats.set(key, f);
  }
  return f;
}

/** Display text for a stored value. Blank is the empty string. */
export function formatValue(field: Pick<FieldView, "type" | "scale" | "values">, value: JsonValue | undefined, currency?: string): string {
  if (value === null || value === undefined || value === "") return "";
  switch (field.type) {
    case "currency":
      return typeof value === "number" ? numberFormat(field.scale ?? 2, currency).format(value) : String(value);
    case "number":
      return typeof value === "number" ? numberFormat(field.scale ?? 0).format(value) : String(value);
    case "boolean":
      return value === true ? "Yes" : "No";
    case "picklist": {
      const pv = field.values?.find((v) => v.value === value);
      return pv ? pv.label : String(value);
    }
    case "date":
      return typeof value === "string" ? formatDate(value) : String(value);
    case "datetime":
      return typeof value === "string" ? value.replace("T", " ").replace(/:00Z$/, " UTC").replace(/Z$/, " UTC") : String(value);
    default:
      return String(value);
  }
}

/** The currency of an amount in a row of a query's answer: its record's (the path the
 * answer's `currencyOf` names for the column), else the workspace's. */
export function currencyIn(
  currencyOf: { [path in string]?: string } | undefined,
  path: string,
  row: { [key: string]: unknown },
  workspace: string,
): string {
  const at = currencyOf?.[path];
  const code = at ? row[at] : undefined;
  return typeof code === "string" && code !== "" ? code : workspace;
}

/** Where a page's rows keep each amount column's currency (no field path has a `#`). */
export const ROW_CURRENCIES = "#currencies";

/** The rows of a query's answer, each with the currency of each of its amount columns
 * (`ROW_CURRENCIES`), read once when the page arrives. */
export function withRowCurrencies<R extends { [key: string]: unknown }>(
  records: R[],
  currencyOf: { [path in string]?: string },
  workspace: string,
): R[] {
  const amounts = Object.keys(currencyOf);
  if (amounts.length === 0) return records;
  return records.map((r) => ({
    ...r,
    [ROW_CURRENCIES]: Object.fromEntries(amounts.map((a) => [a, currencyIn(currencyOf, a, r, workspace)])),
  }));
}

/** The currency of amount column `path` in a row from `withRowCurrencies`. */
export function rowCurrency(row: { [key: string]: unknown }, path: string, workspace: string): string {
  const codes = row[ROW_CURRENCIES] as { [path: string]: string } | undefined;
  return codes?.[path] ?? workspace;
}

/** The text put in an input for editing a stored value (plain, unformatted). */
export function editText(field: Pick<FieldView, "type" | "scale">, value: JsonValue | undefined): string {
  if (value === null || value === undefined) return "";
  if ((field.type === "currency" || field.type === "number") && typeof value === "number") {
    const text = field.scale ? value.toFixed(field.scale) : String(value);
    return chosen ? text.replace(".", decimalMark()) : text;
  }
  return String(value);
}

/**
 * The value to send for typed text. Numbers are sent as text so the kernel checks precision and
 * scale exactly (nothing is rounded here); blank means "clear".
 */
export function inputValue(field: Pick<FieldView, "type">, text: string): JsonValue {
  const t = field.type === "long_text" ? text : text.trim();
  if (t === "") return null;
  if (field.type === "boolean") return t === "true";
  if (field.type === "currency" || field.type === "number") return numberText(t);
  return t;
}

/** A typed number as the kernel reads it: the locale's grouping dropped and its decimal mark
 * made a point ("1.250,50" in German, "1,250.50" in English → "1250.50"). */
export function numberText(t: string): string {
  const comma = chosen !== null && decimalMark() === ",";
  const plain = t.replace(/[\s\u00a0\u202f’']/g, "");
  return comma ? plain.replace(/\./g, "").replace(",", ".") : plain.replace(/,/g, "");
}

/** Whether a typed text differs from the stored value. */
export function changed(field: Pick<FieldView, "type" | "scale">, stored: JsonValue | undefined, text: string): boolean {
  return editText(field, stored) !== (field.type === "long_text" ? text : text.trim());
}
