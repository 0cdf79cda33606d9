// The app's keyboard shortcuts, in one place: the list `?` shows, and the test of which key
// opens it.

export type Shortcut = { keys: string[]; action: string };
export type ShortcutGroup = { where: string; shortcuts: Shortcut[] };

export const SHORTCUTS: ShortcutGroup[] = [
  {
    where: "Anywhere",
    shortcuts: [
      { keys: ["Ctrl", "K"], action: "Ask a question (the Ask bar)" },
      { keys: ["Alt", "1…9"], action: "Open the list of the first, second, … object" },
      { keys: ["?"], action: "Show these shortcuts" },
      { keys: ["Esc"], action: "Close a dialog, the assistant or a summary; from a record, back to its list" },
      { keys: ["Tab"], action: "Move to the next button, field or link (Shift+Tab: back)" },
    ],
  },
  {
    where: "A list of records",
    shortcuts: [
      { keys: ["↓", "↑"], action: "Move the selection (also j and k)" },
      { keys: ["Page Down", "Page Up"], action: "Move by a page" },
      { keys: ["Enter"], action: "Open the selected record" },
      { keys: ["/"], action: "Search the list" },
      { keys: ["n"], action: "New record (where you may create one)" },
    ],
  },
  {
    where: "Proposals and Activity",
    shortcuts: [
      { keys: ["↓", "↑"], action: "Move between proposals or entries" },
      { keys: ["Home", "End"], action: "Go to the first or the last" },
      { keys: ["Enter"], action: "Open the proposal, or an entry's details" },
      { keys: ["Esc"], action: "Close an entry's details" },
    ],
  },
];

/** Whether a key press opens the shortcut list: `?`, not while typing in a field. */
export function opensShortcuts(e: { key: string; ctrlKey?: boolean; metaKey?: boolean; altKey?: boolean }, target: Element | null): boolean {
  if (e.key !== "?" || e.ctrlKey || e.metaKey || e.altKey) return false;
  return !target?.closest("input, textarea, select, [contenteditable='true']");
}
