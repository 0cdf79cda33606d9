// Deep links into Settings from anywhere ("Set up a model" → Settings → Model & runtime): a
// window event the app shell turns into a route, so a component deep in a panel needs no
// callback threaded down to it.

export const OPEN_SETTINGS = "countersign-open-settings";

export function openSettings(section: string): void {
  window.dispatchEvent(new CustomEvent(OPEN_SETTINGS, { detail: section }));
}
