// The app's own confirmation before an action that is hard to take back (deleting a record,
// restoring a backup over the workspace). Not window.confirm: the dialog plugin replaces it with
// an asynchronous version whose result, a Promise, is always truthy — a guard that tests its
// result would never stop anything. One question at a time: asking again cancels
// the question still open. `ConfirmDialog.svelte`, mounted once, shows it.

export type Question = { question: string; action: string; resolve: (ok: boolean) => void };

export const confirmation = $state<{ open: Question | null }>({ open: null });

/** Ask `question`; resolves true when the user chooses `action`, false on Cancel or Esc. */
export function confirmAction(question: string, action: string): Promise<boolean> {
  answer(false);
  return new Promise((resolve) => {
    confirmation.open = { question, action, resolve };
  });
}

/** The user's answer to the open question (none open: nothing happens). */
export function answer(ok: boolean): void {
  const q = confirmation.open;
  confirmation.open = null;
  q?.resolve(ok);
}
