// An import runs beside the rest of the app. Its dialog is mounted once by the app, not by the
// list that opened it, so it outlives a move to another screen; while the import runs it can be
// put aside (a chip shows its progress and brings it back), and the other screens keep reading
// the workspace meanwhile (the kernel imports on a connection of its own). One import at a time.
import type { ObjectView } from "../bindings/ObjectView";

export const importJob = $state<{ view: ObjectView | null; aside: boolean; finished: number }>({
  view: null,
  aside: false,
  finished: 0,
});

/** Open the import of `view`'s records, or bring back the one already open. */
export function openImport(view: ObjectView): void {
  if (!importJob.view) importJob.view = view;
  importJob.aside = false;
}

/** The dialog closed; lists showing records count `finished` to read them again. */
export function closeImport(imported: boolean): void {
  importJob.view = null;
  importJob.aside = false;
  if (imported) importJob.finished += 1;
}
