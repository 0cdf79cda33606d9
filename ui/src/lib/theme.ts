// The colour theme: the system's (default), light or dark, kept on this computer
// (localStorage) and applied as `data-theme` on the document, which theme.css reads. A change
// is announced (THEME_CHANGED) so what draws its own colours, a chart, draws again.

export type Theme = "system" | "light" | "dark";
const KEY = "countersign.theme";
export const THEME_CHANGED = "countersign-theme-changed";

export function savedTheme(): Theme {
  const t = globalThis.localStorage?.getItem(KEY);
  return t === "light" || t === "dark" ? t : "system";
}

export function applyTheme(t: Theme, root: HTMLElement = document.documentElement): void {
  if (t === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", t);
}

export function setTheme(t: Theme): void {
  if (t === "system") globalThis.localStorage?.removeItem(KEY);
  else globalThis.localStorage?.setItem(KEY, t);
  applyTheme(t);
  window.dispatchEvent(new Event(THEME_CHANGED));
}

/** Whether the theme in effect is dark: the choice, else the system's. */
export function isDark(root: HTMLElement = document.documentElement): boolean {
  const t = root.getAttribute("data-theme");
  if (t) return t === "dark";
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}
