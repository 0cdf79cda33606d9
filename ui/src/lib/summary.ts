// Summarize in the UI: the draft read from the model's streamed JSON, and a checked sentence cut
// into text and citation links.
import type { Citation } from "../bindings/Citation";
import type { Sentence } from "../bindings/Sentence";
import type { SetCitation } from "../bindings/SetCitation";

/**
 * The sentences of a summary the model is still writing: `{"sentences": ["…", "…` read as far
 * as it goes, the last sentence possibly unfinished, with the `[F12]` markers taken out. An
 * answer of another shape (the model saying the facts are not enough) has no sentences.
 */
export function draftSentences(streamed: string): string[] {
  const key = streamed.indexOf('"sentences"');
  if (key < 0) return [];
  let i = streamed.indexOf("[", key);
  if (i < 0) return [];
  i += 1;
  const out: string[] = [];
  while (i < streamed.length) {
    while (i < streamed.length && /[\s,]/.test(streamed[i])) i += 1;
    if (streamed[i] !== '"') break;
    i += 1;
    let s = "";
    let closed = false;
    while (i < streamed.length) {
      const c = streamed[i];
      if (c === "\\") {
        const n = streamed[i + 1];
        if (n === undefined) break;
        if (n === "u") {
          const hex = streamed.slice(i + 2, i + 6);
          if (hex.length < 4) break;
          s += String.fromCharCode(parseInt(hex, 16));
          i += 6;
          continue;
        }
        s += ({ n: "\n", t: "\t", r: "", b: "", f: "" } as { [k: string]: string })[n] ?? n;
        i += 2;
        continue;
      }
      if (c === '"') {
        closed = true;
        i += 1;
        break;
      }
      s += c;
      i += 1;
    }
    const text = stripMarkers(stripUnsafe(s));
    if (text) out.push(text);
    if (!closed) break;
  }
  return out;
}

/**
 * The draft is the model's unchecked text: the characters the kernel strips from checked
 * sentences (`value::strip_unsafe_chars`: controls, line and paragraph separators, bidi
 * embeddings, overrides and isolates) go here too, line breaks becoming spaces.
 */
export function stripUnsafe(s: string): string {
  return s
    .replace(/[\t\n\r\u0085\u2028\u2029]/g, " ")
    .replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "");
}

/** A sentence without its citation markers (`[F3]`, `[F3, F4]`, `[3]`, and a marker still being written). */
export function stripMarkers(s: string): string {
  return s
    .replace(/\s*\[F?\d+(\s*,\s*F?\d+)*\]/g, "")
    .replace(/\s*\[F?[\d,\sF]*$/, "")
    .trim();
}

export type Piece = { text: string } | { citation: Citation; n: number };

/**
 * A checked sentence cut at its citations: each citation follows the value it states (`at`,
 * UTF-16 offsets into the text, as JS strings count). `number` gives each fact one number across
 * the summary.
 */
export function sentencePieces(s: Sentence, number: (c: Citation) => number): Piece[] {
  const out: Piece[] = [];
  let from = 0;
  const sorted = [...s.citations].sort((a, b) => a.at - b.at);
  for (const c of sorted) {
    const at = Math.min(Math.max(c.at, from), s.text.length);
    if (at > from) out.push({ text: s.text.slice(from, at) });
    out.push({ citation: c, n: number(c) });
    from = at;
  }
  if (from < s.text.length) out.push({ text: s.text.slice(from) });
  return out;
}

/** Numbers for the facts a summary cites, in order of first citation. */
export function citationNumbers(sentences: Sentence[]): (c: Citation) => number {
  const numbers = new Map<string, number>();
  for (const s of sentences) {
    for (const c of [...s.citations].sort((a, b) => a.at - b.at)) {
      if (!numbers.has(c.reference)) numbers.set(c.reference, numbers.size + 1);
    }
  }
  return (c) => numbers.get(c.reference) ?? 0;
}

export type CitationTarget = { set: SetCitation } | { field: string } | { object: string; id: string };

/**
 * Where a citation leads: a rollup to the rows it is computed over, a field of the record on
 * screen, or another record (related, a note).
 */
export function citationTarget(c: Citation, object: string, id: string): CitationTarget {
  if (c.set) return { set: c.set };
  return c.object === object && c.id === id ? { field: c.field } : { object: c.object, id: c.id };
}

/**
 * A citation's tooltip: what the fact is and its value, and for a rollup that the link opens the
 * rows it is computed over ("number of open opportunities: 2 — opens the 2 rows").
 */
export function citationTitle(c: Citation, object: string, id: string): string {
  const where = c.set || (c.object === object && c.id === id) ? c.label : `${c.label} of ${c.recordName} (${c.object})`;
  const value = c.display.length > 120 ? `${c.display.slice(0, 117)}…` : c.display;
  const opens = !c.set
    ? ""
    : c.set.operation === "count"
      ? ` — opens the ${c.display} row${c.display === "1" ? "" : "s"}`
      : " — opens the rows it is computed over";
  return `${where}: ${value}${opens}${c.byModel ? "" : " — cited by Countersign: the one fact that states this value"}`;
}
