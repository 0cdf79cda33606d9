// How a tool call reads to a person: its effect, and where a decided call ended.
import type { Effect } from "../bindings/Effect";
import type { ToolCallView } from "../bindings/ToolCallView";

export function effectLabel(e: Effect): string {
  return { reads_workspace: "reads this workspace", reads_outside: "reads outside", changes_outside: "changes something outside" }[e];
}

/** One line on a call a person just decided. */
export function describeCall(c: ToolCallView): string {
  const result = (c.result ?? {}) as { message?: string };
  switch (c.state) {
    case "succeeded":
      return `${c.tool}: approved and done.`;
    case "denied":
      return `${c.tool}: denied${c.comment ? ` (“${c.comment}”)` : ""}; the model is told.`;
    case "failed":
      return `${c.tool}: approved, but it failed: ${result.message ?? "no reason given"}.`;
    case "outcome_unknown":
      return `${c.tool}: approved, but whether it happened is unknown (${result.message ?? "no answer"}); check the target, then say what happened.`;
    case "expired":
      return `${c.tool}: nobody decided in time; the model is told.`;
    default:
      return `${c.tool}: ${c.state.replace("_", " ")}.`;
  }
}

/** A call's arguments as a person reads them: each input with its whole value (text as written, line breaks kept; anything else as JSON). */
export function argumentEntries(args: unknown): [string, string][] {
  if (!args || typeof args !== "object" || Array.isArray(args)) return [["(input)", JSON.stringify(args, null, 2)]];
  return Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v, null, 2)]);
}

/** A tool's answer as text: text as it came (an MCP tool's text content, a JSON string), a structure as indented JSON, a cut answer said so. */
export function toolOutputText(output: unknown): string {
  const o = output as { output?: unknown; truncated?: boolean } | null;
  if (o && typeof o === "object" && !Array.isArray(o) && o.truncated === true && "output" in o) {
    return `${toolOutputText(o.output)}\n… (cut: the answer was longer than a tool may give)`;
  }
  if (typeof output === "string") return output;
  if (o && typeof o === "object" && !Array.isArray(o)) {
    const keys = Object.keys(o);
    const only = keys.length === 1 ? (o as Record<string, unknown>)[keys[0]] : undefined;
    if (typeof only === "string") return only;
  }
  return JSON.stringify(output, null, 2);
}
