import { describe, expect, it } from "vitest";
import { argumentEntries, describeCall, effectLabel, toolOutputText } from "./toolCalls";
import type { ToolCallView } from "../bindings/ToolCallView";

const call = (over: Partial<ToolCallView>): ToolCallView => ({
  id: "c1", operationKey: "r:1:t", tool: "open_ticket", toolVersion: 1, effect: "changes_outside", capability: "assistant",
  askedBy: "ben", arguments: {}, rationale: "", state: "succeeded", createdAt: "2026-12-01T10:00:00Z", attempts: 1, ...over,
});

describe("tool calls as a person reads them", () => {
  it("names the effect and where a decided call ended", () => {
    expect(effectLabel("changes_outside")).toBe("changes something outside");
    expect(describeCall(call({}))).toBe("open_ticket: approved and done.");
    expect(describeCall(call({ state: "denied", comment: "Use the phone." }))).toContain("“Use the phone.”");
    expect(describeCall(call({ state: "outcome_unknown", result: { message: "no answer in time" } }))).toContain("whether it happened is unknown (no answer in time)");
    expect(describeCall(call({ state: "failed", result: { code: "execution_error", message: "HTTP 400" } }))).toContain("it failed: HTTP 400");
  });
  it("shows each argument whole, text with its line breaks", () => {
    expect(argumentEntries({ title: "a\nb", amount: 12.5, tags: ["x"] })).toEqual([
      ["title", "a\nb"],
      ["amount", "12.5"],
      ["tags", '[\n  "x"\n]'],
    ]);
  });
  it("shows a tool's answer as text, a cut one said so", () => {
    expect(toolOutputText({ content: "The warehouse opens at 7:30." })).toBe("The warehouse opens at 7:30.");
    expect(toolOutputText("plain")).toBe("plain");
    expect(toolOutputText({ refund: "rf_1", status: "done" })).toBe('{\n  "refund": "rf_1",\n  "status": "done"\n}');
    expect(toolOutputText({ output: "xxx", truncated: true })).toBe("xxx\n… (cut: the answer was longer than a tool may give)");
  });
});
