import { describe, expect, it } from "vitest";
import { modal } from "./modal";

describe("a modal dialog", () => {
  it("focuses its button, closes on Esc without letting Esc through, and gives focus back", async () => {
    const before = document.createElement("button");
    document.body.appendChild(before);
    before.focus();
    const dialog = document.createElement("dialog");
    const button = document.createElement("button");
    dialog.appendChild(button);
    document.body.appendChild(dialog);
    let closed = 0;
    let leaked = 0;
    document.body.addEventListener("keydown", () => (leaked += 1));
    const action = modal(dialog, { onclose: () => (closed += 1), focus: () => button });
    await Promise.resolve();
    expect(document.activeElement).toBe(button);
    dialog.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(closed).toBe(1);
    expect(leaked).toBe(0);
    expect(document.activeElement).toBe(before);
    action?.destroy?.();
  });
});
