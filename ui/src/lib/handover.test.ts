import { afterEach, describe, expect, it } from "vitest";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import { followHandover } from "./handover";
import type { Error as KernelError } from "../bindings/Error";
import type { WorkspaceView } from "../bindings/WorkspaceView";

const view = { path: "/w/books.countersign", name: "Books", currency: "USD", generation: 1, users: [], objects: [] } as unknown as WorkspaceView;
const settle = () => new Promise((r) => setTimeout(r, 0));

describe("a second launch's workspace", () => {
  afterEach(() => clearMocks());
  it("is shown when opened, its refusal as a kernel error, until stopped", async () => {
    mockIPC(() => null, { shouldMockEvents: true });
    const opened: WorkspaceView[] = [];
    const refused: KernelError[] = [];
    const stop = followHandover({ opened: (v) => opened.push(v), refused: (e) => refused.push(e) });
    await settle();
    await emit("workspace-opened", view);
    await emit("workspace-refused", { code: "store.not_a_workspace", fault: "user", message: "no such file", retriable: false });
    await settle();
    expect(opened).toEqual([view]);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ fault: "user", message: "no such file" });
    stop();
    await settle();
    await emit("workspace-opened", view);
    await settle();
    expect(opened).toHaveLength(1);
  });
  it("takes a refusal that is not a kernel error as the platform's fault", async () => {
    mockIPC(() => null, { shouldMockEvents: true });
    const refused: KernelError[] = [];
    const stop = followHandover({ opened: () => undefined, refused: (e) => refused.push(e) });
    await settle();
    await emit("workspace-refused", "disk on fire");
    await settle();
    expect(refused).toEqual([{ code: "internal", fault: "platform", message: "disk on fire", retriable: false }]);
    stop();
  });
  it("follows nothing, and fails nothing, outside the app", async () => {
    const stop = followHandover({ opened: () => undefined, refused: () => undefined });
    await settle();
    expect(() => stop()).not.toThrow();
  });
});
