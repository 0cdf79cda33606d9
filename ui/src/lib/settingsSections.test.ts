import { describe, expect, it } from "vitest";
import { findSettings, SECTIONS, sectionOf } from "./settingsSections";

describe("settings sections", () => {
  it("finds a setting by any words of its name, with its section", () => {
    const found = findSettings("built-in");
    expect(found.map((f) => [f.section.key, f.setting])).toEqual([["model", "Built-in model"]]);
    expect(findSettings("LEARNED corrections").map((f) => f.section.key)).toEqual(["studio"]);
    expect(findSettings("   ")).toEqual([]);
    expect(findSettings("no such setting")).toEqual([]);
  });

  it("opens a section by its route key, else General", () => {
    expect(sectionOf("mcp").label).toBe("Other apps (MCP)");
    expect(sectionOf("nowhere").key).toBe("general");
    expect(sectionOf(undefined).key).toBe("general");
    expect(new Set(SECTIONS.map((s) => s.key)).size).toBe(SECTIONS.length);
  });
});
