// Keys on a list whose rows are focusable (the proposals inbox, Activity's entries): ↓ and ↑ move
// to the next and the previous row, Home and End to the first and the last, Enter or Space opens
// the row. A control inside a row keeps its own keys.

export function rowKeydown(e: KeyboardEvent, open: () => void): void {
  const row = e.currentTarget as HTMLElement;
  if (e.target !== row) return;
  let to: Element | null | undefined;
  switch (e.key) {
    case "Enter":
    case " ":
      e.preventDefault();
      open();
      return;
    case "ArrowDown":
      to = row.nextElementSibling;
      break;
    case "ArrowUp":
      to = row.previousElementSibling;
      break;
    case "Home":
      to = row.parentElement?.firstElementChild;
      break;
    case "End":
      to = row.parentElement?.lastElementChild;
      break;
    default:
      return;
  }
  e.preventDefault();
  (to as HTMLElement | null | undefined)?.focus();
}
