// What the workspace menu shows of the desktop's files: the recent workspaces, the backups
// (when, why, how big) and the question asked before a restore. Times come from the kernel in
// RFC 3339 UTC and are shown in local time (`timeZone` is for tests: the machine's when absent).
import type { Backup } from "../bindings/Backup";
import type { BackupReason } from "../bindings/BackupReason";
import type { RecentWorkspace } from "../bindings/RecentWorkspace";

/** Why a backup was taken, in words. */
export const REASON_LABELS: { [r in BackupReason]: string } = {
  migration: "Before the file was upgraded",
  deploy: "Before a definition was deployed",
  daily: "Daily",
  before_restore: "Before a restore",
  manual: "Backed up on request",
};

export function reasonLabel(reason: BackupReason): string {
  return REASON_LABELS[reason] ?? reason;
}

/** A moment as `YYYY-MM-DD HH:MM` in local time (or `timeZone`); text that is no time stays as it is. */
export function localTime(iso: string, timeZone?: string): string {
  const t = new Date(iso);
  if (!iso || Number.isNaN(t.getTime())) return iso;
  const parts: { [k: string]: string } = {};
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  for (const p of format.formatToParts(t)) parts[p.type] = p.value;
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** A file size in binary units: bytes whole, larger sizes with one decimal below 10. */
export function byteSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "";
  let n = bytes;
  let unit = 0;
  while (unit < UNITS.length - 1 && n >= 1024) {
    n /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${n} B`;
  let shown = n < 10 ? Math.round(n * 10) / 10 : Math.round(n);
  // 1023.7 KiB rounds to 1024: say 1 MiB instead.
  if (shown >= 1024 && unit < UNITS.length - 1) {
    shown = 1;
    unit += 1;
  }
  return `${shown} ${UNITS[unit]}`;
}

/** A path's file name and the folder it is in (either separator, so Windows paths split too). */
export function splitPath(path: string): { name: string; folder: string } {
  const trimmed = path.replace(/[\\/]+$/, "");
  const cut = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  if (cut < 0) return { name: trimmed, folder: "" };
  return { name: trimmed.slice(cut + 1), folder: trimmed.slice(0, cut) || trimmed.slice(0, 1) };
}

export type RecentEntry = {
  path: string;
  name: string;
  folder: string;
  /** When it was last opened, in local time. */
  when: string;
  /** The file is still there. */
  exists: boolean;
  /** The workspace open now. */
  current: boolean;
};

/** The recent workspaces as the menu lists them: newest first, each path once, the open one marked. */
export function recentEntries(list: readonly RecentWorkspace[], current: string | null, timeZone?: string): RecentEntry[] {
  const seen = new Set<string>();
  return [...list]
    .sort((a, b) => (Date.parse(b.openedAt) || 0) - (Date.parse(a.openedAt) || 0))
    .filter((w) => !seen.has(w.path) && seen.add(w.path))
    .map((w) => ({
      path: w.path,
      ...splitPath(w.path),
      when: localTime(w.openedAt, timeZone),
      exists: w.exists,
      current: current !== null && samePath(w.path, current),
    }));
}

/** Two spellings of one file: trailing separators and (on Windows) the separator itself do not matter. */
export function samePath(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/[\\/]+$/, "").replace(/\\/g, "/");
  return norm(a) === norm(b);
}

/** The question asked before a restore: which backup, and that what it replaces is kept. */
export function restoreQuestion(backup: Pick<Backup, "takenAt" | "reason">, timeZone?: string): string {
  return (
    `Restore the backup taken ${localTime(backup.takenAt, timeZone)} (${reasonLabel(backup.reason).toLowerCase()})?\n\n` +
    "The workspace as it is now is backed up first, so you can go back to it from this list."
  );
}

/** What the menu says once a backup is taken. */
export function backedUpNotice(backup: Pick<Backup, "path" | "bytes">): string {
  return `Backed up: ${splitPath(backup.path).name} (${byteSize(backup.bytes)}).`;
}

/** What the menu says once a backup is restored. */
export function restoredNotice(backup: Pick<Backup, "takenAt">, timeZone?: string): string {
  return `Restored the backup taken ${localTime(backup.takenAt, timeZone)}. The state it replaced was backed up first.`;
}
