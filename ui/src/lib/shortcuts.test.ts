import { describe, expect, it } from "vitest";
import { opensShortcuts, SHORTCUTS } from "./shortcuts";

describe("the shortcut list", () => {
  it("opens on ? anywhere but while typing", () => {
    const div = document.createElement("div");
    const input = document.createElement("input");
    div.appendChild(input);
    expect(opensShortcuts({ key: "?" }, div)).toBe(true);
    expect(opensShortcuts({ key: "?" }, null)).toBe(true);
    expect(opensShortcuts({ key: "?" }, input)).toBe(false);
    expect(opensShortcuts({ key: "?", ctrlKey: true }, div)).toBe(false);
    expect(opensShortcuts({ key: "/" }, div)).toBe(false);
  });

  it("names itself and every shortcut's keys", () => {
    const all = SHORTCUTS.flatMap((g) => g.shortcuts);
    expect(all.some((s) => s.keys.join("") === "?")).toBe(true);
    expect(all.every((s) => s.keys.length > 0 && s.action.length > 0)).toBe(true);
  });
});
