// One call to the model (Ask, Extract, Summarize) as a panel shows it: the id the kernel knows it
// by, its progress as it streams in, the time it has taken, and Cancel (tested in modelCall.test.ts).
import { Channel } from "@tauri-apps/api/core";
import { api, kernelError } from "./api";
import type { AskProgress } from "../bindings/AskProgress";
import type { Error as KernelError } from "../bindings/Error";

/** What a call ends with: the answer, or the kernel's typed error (a cancelled call's code is "cancelled"). */
export type Outcome<T> = { answer: T } | { failure: KernelError };

/**
 * The command that makes the call, given the call's id and its progress channel: api.ask,
 * api.extract, api.summarize (the model's progress), or api.runEvalSuite (a case at a time).
 */
export type Send<T, P = AskProgress> = (call: string, progress: Channel<P>) => Promise<T>;

/**
 * A call with Cancel and its progress. The model's progress (`AskProgress`) is followed here;
 * any other (`P`) goes to `onprogress`.
 */
export class ModelCall<T, P = AskProgress> {
  /** Names the call for `cancel_model_call`. */
  readonly id: string;
  running = $state(true);
  /** 1, and 2 once the first answer was refused and the model is asked again. */
  attempt = $state(1);
  /** Characters the model has written in this attempt. */
  chars = $state(0);
  /** The text the model has written in this attempt, for a command that streams it (Summarize). */
  text = $state("");
  /** Seconds since the call started, to a tenth; stops when the call ends. */
  elapsed = $state(0);
  /** Resolves when the call ends; never rejects. */
  readonly outcome: Promise<Outcome<T>>;

  /** Start a call; `kind` begins its id. */
  constructor(kind: string, send: Send<T, P>, onprogress?: (p: P) => void) {
    this.id = `${kind}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    this.outcome = this.run(send, onprogress ?? ((p) => this.advance(p as AskProgress)));
  }

  /** Ask the kernel to stop the call; it then ends with the "cancelled" error. Nothing once it has ended. */
  async cancel(): Promise<void> {
    if (this.running) await api.cancelCall(this.id);
  }

  private async run(send: Send<T, P>, onprogress: (p: P) => void): Promise<Outcome<T>> {
    const progress = new Channel<P>();
    progress.onmessage = onprogress;
    const started = Date.now();
    const timer = setInterval(() => (this.elapsed = Math.round((Date.now() - started) / 100) / 10), 100);
    try {
      return { answer: await send(this.id, progress) };
    } catch (e) {
      return { failure: kernelError(e) };
    } finally {
      clearInterval(timer);
      this.running = false;
    }
  }

  private advance(p: AskProgress) {
    if (p.kind === "thinking") {
      this.attempt = p.attempt;
      this.chars = 0;
      this.text = "";
    } else if (p.kind === "writing") {
      this.chars = p.chars;
    } else {
      this.text += p.delta;
    }
  }
}
