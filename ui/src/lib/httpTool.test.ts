import { describe, expect, it } from "vitest";
import { emptyDraft, inputSchema, toolDefinition } from "./httpTool";

describe("an HTTP tool written in the app", () => {
  it("turns its input rows into a closed schema", () => {
    expect(
      inputSchema([
        { name: "title", type: "string", required: true, description: "A short title" },
        { name: "priority", type: "integer", required: false, description: "" },
        { name: " ", type: "string", required: true, description: "" },
      ]),
    ).toEqual({
      type: "object",
      properties: { title: { type: "string", description: "A short title" }, priority: { type: "integer" } },
      required: ["title"],
      additionalProperties: false,
    });
  });
  it("is refused until allowed, keeps its key in the keyring by reference, and says when its body is not JSON", () => {
    const d = { ...emptyDraft(), name: "open_ticket", description: "Open a ticket.", url: "http://127.0.0.1:9/t", body: '{"subject": "{title}"}', withKey: true };
    const def = toolDefinition(d);
    expect("problem" in def).toBe(false);
    if ("problem" in def) return;
    expect(def.policy).toBe("block");
    expect(def.capabilities).toEqual(["assistant"]);
    expect(def.implementation).toMatchObject({ kind: "http", method: "POST", body: { subject: "{title}" }, credential: "secret://countersign/tool-open_ticket" });
    expect(toolDefinition({ ...d, body: "{subject" })).toMatchObject({ problem: expect.stringContaining("not JSON") });
  });
});
