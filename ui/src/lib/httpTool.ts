// An HTTP tool as an admin writes it in Settings → Tools: its inputs as rows, turned into the
// closed input schema the kernel requires (every object `additionalProperties: false`), and
// the whole definition. The kernel checks it (a URL off this machine without https, a
// placeholder naming no input, a GET with a body…) and says where each problem is.
import type { Effect } from "../bindings/Effect";
import type { HttpMethod } from "../bindings/HttpMethod";
import type { ToolDef } from "../bindings/ToolDef";

export type InputRow = { name: string; type: "string" | "number" | "integer" | "boolean"; required: boolean; description: string };

export type HttpToolDraft = {
  name: string;
  description: string;
  effect: Effect;
  method: HttpMethod;
  url: string;
  inputs: InputRow[];
  /** The body template as JSON text ("" for none). */
  body: string;
  /** Whether a key is sent (kept in the OS keyring under `secret://countersign/tool-<name>`). */
  withKey: boolean;
  responsePointer: string;
  deduplicates: boolean;
  assistant: boolean;
};

export function emptyDraft(): HttpToolDraft {
  return { name: "", description: "", effect: "changes_outside", method: "POST", url: "", inputs: [], body: "", withKey: false, responsePointer: "", deduplicates: false, assistant: true };
}

/** The closed input schema of the rows (rows without a name are left out). */
export function inputSchema(rows: InputRow[]): Record<string, unknown> {
  const named = rows.filter((r) => r.name.trim());
  const properties = Object.fromEntries(
    named.map((r) => [r.name.trim(), r.description.trim() ? { type: r.type, description: r.description.trim() } : { type: r.type }]),
  );
  const required = named.filter((r) => r.required).map((r) => r.name.trim());
  return { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

export const credentialOf = (name: string) => `secret://countersign/tool-${name.trim()}`;

/** The definition to save, or the problem with the body's JSON. New tools are refused until allowed. */
export function toolDefinition(d: HttpToolDraft): ToolDef | { problem: string } {
  let body: unknown = undefined;
  if (d.body.trim()) {
    try {
      body = JSON.parse(d.body);
    } catch (e) {
      return { problem: `The body template is not JSON: ${(e as Error).message}` };
    }
  }
  return {
    name: d.name.trim(),
    description: d.description.trim(),
    effect: d.effect,
    inputSchema: inputSchema(d.inputs),
    implementation: {
      kind: "http",
      method: d.method,
      url: d.url.trim(),
      ...(body !== undefined ? { body } : {}),
      ...(d.withKey ? { credential: credentialOf(d.name) } : {}),
      ...(d.responsePointer.trim() ? { responsePointer: d.responsePointer.trim() } : {}),
      deduplicates: d.deduplicates,
    },
    capabilities: d.assistant ? ["assistant"] : [],
    policy: "block",
  };
}
