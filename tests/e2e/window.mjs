// The app's window for the end-to-end suites (app, installed, footprint): a WebDriver session
// through tauri-driver on 127.0.0.1:4444, and the memory of the app and its WebKit processes.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { remote } from "webdriverio";

/** Start `app` in a real window and drive it (tauri-driver must be listening). */
export function openWindow(app) {
  return remote({
    hostname: "127.0.0.1",
    port: 4444,
    logLevel: "warn",
    connectionRetryCount: 0,
    capabilities: { "tauri:options": { application: app } },
  });
}

/**
 * Memory of the app and its WebKit child processes, from /proc: RSS (counts shared pages in every
 * process) and PSS (shares them out, so the sum is the real footprint), in MiB.
 */
export function appMemory(app) {
  const pids = execFileSync("pgrep", ["-f", app], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
  const all = new Set(pids);
  for (const pid of pids) {
    for (const child of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, "utf8");
        const ppid = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
        if (ppid === pid) all.add(child);
      } catch {}
    }
  }
  const mib = (kb) => Math.round(kb / 102.4) / 10;
  const processes = [];
  for (const pid of all) {
    try {
      const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      const rss = Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/)?.[1] ?? 0);
      const pss = Number(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/Pss:\s+(\d+) kB/)?.[1] ?? 0);
      processes.push({ name, rssMiB: mib(rss), pssMiB: mib(pss) });
    } catch {}
  }
  const sum = (k) => Math.round(processes.reduce((a, p) => a + p[k], 0) * 10) / 10;
  return { processes, totalRssMiB: sum("rssMiB"), totalPssMiB: sum("pssMiB") };
}

