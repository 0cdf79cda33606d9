// A modal <dialog> (`use:modal`): shown modal on mount (the page under it inert), the first
// button given focus, Esc closes it and nothing under it (a record page would go back to its
// list), and focus goes back where it was when it closes. `close(dialog)` shuts it the same way.
import type { Action } from "svelte/action";

export function close(dialog: HTMLDialogElement | null): void {
  if (typeof dialog?.close === "function" && dialog.open) dialog.close();
  else dialog?.dispatchEvent(new Event("close")); // a webview without <dialog> support
}

export const modal: Action<HTMLDialogElement, { onclose: () => void; focus?: () => HTMLElement | null }> = (dialog, opts) => {
  const from = document.activeElement as HTMLElement | null;
  if (typeof dialog.showModal === "function") dialog.showModal();
  else dialog.setAttribute("open", "");
  // After the dialog's children are bound.
  queueMicrotask(() => opts.focus?.()?.focus());
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== "Escape") return;
    e.stopPropagation();
    e.preventDefault();
    close(dialog);
  };
  const onClosed = () => {
    from?.focus?.();
    opts.onclose();
  };
  dialog.addEventListener("keydown", onKey);
  dialog.addEventListener("close", onClosed);
  return {
    destroy() {
      dialog.removeEventListener("keydown", onKey);
      dialog.removeEventListener("close", onClosed);
    },
  };
};
