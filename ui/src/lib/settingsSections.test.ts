import { describe, expect, it } from "vitest";
import { findSettings, SECTIONS, sectionFromHash, sectionHash, sectionOf } from "./settingsSections";

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

  it("has a URL route per section, read back from the window's hash", () => {
    expect(sectionHash("tools")).toBe("#settings/tools");
    expect(sectionHash("nowhere")).toBe("#settings/general");
    expect(sectionFromHash("#settings/studio")).toBe("studio");
    expect(sectionFromHash("#settings/nowhere")).toBeNull();
    expect(sectionFromHash("")).toBeNull();
  });
});
