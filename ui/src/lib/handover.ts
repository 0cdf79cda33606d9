// A second launch of the app hands its workspace file to this one (the file association, or
// `countersign file.countersign` while the app runs): the Rust side opens it and tells the
// window what came of it.
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { kernelError } from "./api";
import type { Error as KernelError } from "../bindings/Error";
import type { WorkspaceView } from "../bindings/WorkspaceView";

export const WORKSPACE_OPENED = "workspace-opened";
export const WORKSPACE_REFUSED = "workspace-refused";

export type Handover = {
  /** The handed-over workspace is open: show it as if it were opened from the menu. */
  opened: (view: WorkspaceView) => void;
  /** It could not be opened; the workspace open before stays open. */
  refused: (error: KernelError) => void;
};

/** Follow the hand-overs until the returned function is called. Outside the app (no IPC), nothing is followed. */
export function followHandover(to: Handover): () => void {
  let stopped = false;
  const stops: UnlistenFn[] = [];
  const follow = (p: Promise<UnlistenFn>) =>
    p.then(
      (stop) => (stopped ? stop() : stops.push(stop)),
      () => undefined,
    );
  follow(listen<WorkspaceView>(WORKSPACE_OPENED, (e) => to.opened(e.payload)));
  follow(listen<unknown>(WORKSPACE_REFUSED, (e) => to.refused(kernelError(e.payload))));
  return () => {
    stopped = true;
    for (const stop of stops.splice(0)) stop();
  };
}
