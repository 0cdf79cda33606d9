// The import wizard's own steps: a file's bytes as the base64 the command takes, and the
// person's choices for values a picklist does not hold, as the import's value map.

/** What to do with a value the picklist does not hold: map it to one it does, add it, or blank. */
export type ValueChoice = { map: string } | "add" | "blank";

/** Bytes as base64 (in chunks: a whole file at once would overflow the call's arguments). */
export function base64Of(bytes: Uint8Array): string {
  let text = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) text += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(text);
}

/**
 * The value map an import takes: per field, each value mapped (to the value chosen, or `""`
 * for blank). Values being added to the picklist are left as they are: once added, they fit.
 */
export function valueChoices(choices: Record<string, Record<string, ValueChoice>>): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [field, values] of Object.entries(choices)) {
    for (const [value, choice] of Object.entries(values)) {
      if (choice === "add") continue;
      (out[field] ??= {})[value] = choice === "blank" ? "" : choice.map;
    }
  }
  return out;
}
