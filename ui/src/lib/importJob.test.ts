import { describe, expect, it } from "vitest";
import { closeImport, importJob, openImport } from "./importJob.svelte";
import type { ObjectView } from "../bindings/ObjectView";

const view = (key: string) => ({ key, label: key, pluralLabel: `${key}s` }) as unknown as ObjectView;

describe("the import beside the app", () => {
  it("keeps one import, brings it back from aside, and counts the finished ones", () => {
    openImport(view("account"));
    importJob.aside = true;
    openImport(view("contact"));
    expect(importJob.view?.key).toBe("account");
    expect(importJob.aside).toBe(false);
    const before = importJob.finished;
    closeImport(false);
    expect(importJob.view).toBeNull();
    expect(importJob.finished).toBe(before);
    openImport(view("contact"));
    closeImport(true);
    expect(importJob.finished).toBe(before + 1);
  });
});
