import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import type { Channel } from "@tauri-apps/api/core";
import { api } from "./api";
import { ModelCall } from "./modelCall.svelte";
import type { AskAnswer } from "../bindings/AskAnswer";
import type { AskProgress } from "../bindings/AskProgress";

/**
 * The kernel's side of the IPC (a fake invoke): it records each command, holds a model call open
 * until the test answers or fails it, and speaks over the call's progress channel.
 */
function fakeKernel() {
  const commands: [string, unknown][] = [];
  let progress: Channel<AskProgress> | null = null;
  let end: { answer: (a: unknown) => void; fail: (e: unknown) => void } | null = null;
  mockIPC((cmd, args) => {
    commands.push([cmd, args]);
    if (cmd === "cancel_model_call") {
      end?.fail({ code: "cancelled", fault: "user", message: "the call was cancelled", retriable: false });
      return null;
    }
    progress = (args as { progress: Channel<AskProgress> }).progress;
    return new Promise((resolve, reject) => (end = { answer: resolve, fail: reject }));
  });
  return {
    commands,
    say: (p: AskProgress) => progress!.onmessage(p),
    answer: (a: unknown) => end!.answer(a),
    fail: (e: unknown) => end!.fail(e),
  };
}

const ask = () => new ModelCall<AskAnswer>("ask", (call, progress) => api.ask(call, "Which accounts?", progress));

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  clearMocks();
  vi.useRealTimers();
});

describe("a model call", () => {
  it("sends its id and progress channel, and follows the progress", async () => {
    const kernel = fakeKernel();
    const call = ask();
    expect(call.id).toMatch(/^ask-/);
    expect(kernel.commands).toEqual([["ask", { call: call.id, question: "Which accounts?", progress: expect.anything() }]]);
    expect([call.running, call.attempt, call.chars, call.text, call.elapsed]).toEqual([true, 1, 0, "", 0]);

    kernel.say({ kind: "thinking", attempt: 1 });
    kernel.say({ kind: "text", delta: '{"sentences":' });
    kernel.say({ kind: "writing", chars: 13 });
    vi.advanceTimersByTime(1500);
    expect([call.attempt, call.chars, call.text, call.elapsed]).toEqual([1, 13, '{"sentences":', 1.5]);

    // A second attempt starts over: nothing of it is written yet.
    kernel.say({ kind: "thinking", attempt: 2 });
    expect([call.attempt, call.chars, call.text]).toEqual([2, 0, ""]);
    kernel.say({ kind: "writing", chars: 4 });
    expect(call.chars).toBe(4);
  });

  it("resolves to the answer, and its clock stops when it ends", async () => {
    const kernel = fakeKernel();
    const call = ask();
    vi.advanceTimersByTime(2000);
    kernel.answer({ traceId: "t1" });
    expect(await call.outcome).toEqual({ answer: { traceId: "t1" } });
    expect(call.running).toBe(false);
    expect(call.elapsed).toBe(2);
    vi.advanceTimersByTime(5000);
    expect(call.elapsed).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("cancels the call by its id, and ends with the kernel's cancelled error", async () => {
    const kernel = fakeKernel();
    const call = ask();
    await call.cancel();
    expect(kernel.commands.map(([cmd]) => cmd)).toEqual(["ask", "cancel_model_call"]);
    expect(kernel.commands[1][1]).toEqual({ call: call.id });
    const outcome = await call.outcome;
    expect("failure" in outcome && outcome.failure.code).toBe("cancelled");
    expect(vi.getTimerCount()).toBe(0);
    // An ended call is not cancelled again.
    await call.cancel();
    expect(kernel.commands).toHaveLength(2);
  });

  it("ends with the kernel's typed error, or a platform error for anything else", async () => {
    const kernel = fakeKernel();
    const refused = ask();
    kernel.fail({ code: "grounding.insufficient", fault: "user", message: "no field holds a margin", retriable: false });
    expect(await refused.outcome).toEqual({
      failure: { code: "grounding.insufficient", fault: "user", message: "no field holds a margin", retriable: false },
    });

    const broken = new ModelCall<Uint8Array>("extract", () => Promise.reject(new TypeError("the file could not be read")));
    expect(await broken.outcome).toEqual({
      failure: { code: "internal", fault: "platform", message: "TypeError: the file could not be read", retriable: false },
    });
    expect(broken.running).toBe(false);
  });
});
