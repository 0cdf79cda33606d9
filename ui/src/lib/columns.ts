// Which columns an object list shows, from what the user may read.
import type { ObjectView } from "../bindings/ObjectView";

/** The name field first, then layout order; no long text; at most `max`. */
export function listColumns(view: ObjectView, max = 6): string[] {
  const readable = new Map(view.fields.map((f) => [f.key, f]));
  const out: string[] = [];
  const order = [view.nameField, ...view.sections.flatMap((s) => s.fields)];
  for (const key of order) {
    const f = readable.get(key);
    if (!f || f.type === "long_text" || out.includes(key)) continue;
    out.push(key);
    if (out.length === max) break;
  }
  return out;
}
