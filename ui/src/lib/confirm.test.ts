import { describe, expect, it } from "vitest";
import { answer, confirmAction, confirmation } from "./confirm.svelte";

describe("confirmAction", () => {
  it("resolves with the user's answer and closes the question", async () => {
    const asked = confirmAction("Delete this account?", "Delete");
    expect(confirmation.open?.question).toBe("Delete this account?");
    expect(confirmation.open?.action).toBe("Delete");
    answer(true);
    await expect(asked).resolves.toBe(true);
    expect(confirmation.open).toBeNull();
  });

  it("a second question cancels the first, and Cancel is false", async () => {
    const first = confirmAction("Restore the backup?", "Restore");
    const second = confirmAction("Delete this contact?", "Delete");
    await expect(first).resolves.toBe(false);
    expect(confirmation.open?.action).toBe("Delete");
    answer(false);
    await expect(second).resolves.toBe(false);
  });

  it("an answer with no question open does nothing", () => {
    expect(() => answer(true)).not.toThrow();
    expect(confirmation.open).toBeNull();
  });
});

describe("the app asks through confirmAction only", () => {
  it("no source calls window.confirm, alert or prompt (the dialog plugin makes them asynchronous)", () => {
    const sources = import.meta.glob(["../**/*.svelte", "../**/*.ts", "!../**/*.test.ts"], {
      query: "?raw",
      import: "default",
      eager: true,
    }) as Record<string, string>;
    expect(Object.keys(sources).length).toBeGreaterThan(20);
    const offenders = Object.entries(sources)
      .filter(([, text]) => /(^|[^\w.])(window\.)?(confirm|alert|prompt)\(/m.test(text))
      .map(([path]) => path);
    expect(offenders).toEqual([]);
  });
});
