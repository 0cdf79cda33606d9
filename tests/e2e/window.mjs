// The app's window for the end-to-end suites (app, installed, footprint): a WebDriver session
// through tauri-driver on 127.0.0.1:4444, and the memory of the app and its WebKit processes.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
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


/**
 * A PNG of the display the app runs on ($DISPLAY), as the user sees it: the X server's own
 * picture (`xwd`, from x11-apps), not WebDriver's. The app renders on the CPU (see
 * src-tauri/src/desktop.rs), and WebKitWebDriver's screenshot of a page drawn that way can hang.
 */
export function screenshot(file) {
  const xwd = execFileSync("xwd", ["-root", "-silent"], { maxBuffer: 64 << 20 });
  // The XWD header: 25 big-endian 32-bit fields, then the window name, then the colour map.
  const field = (i) => xwd.readUInt32BE(4 * i);
  const [headerSize, width, height, byteOrder, bitsPerPixel, bytesPerLine, colours] =
    [field(0), field(4), field(5), field(7), field(11), field(12), field(19)];
  // Pixels are 4 bytes (32 bits: B, G, R, unused) or packed in 3 (24 bits: B, G, R), least
  // significant first; Xvfb's depth-24 screen has given both.
  const step = bitsPerPixel / 8;
  if ((step !== 4 && step !== 3) || byteOrder !== 0) throw new Error(`an XWD of ${bitsPerPixel} bits, byte order ${byteOrder}`);
  const pixels = headerSize + colours * 12;
  const raw = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const row = pixels + y * bytesPerLine;
    const out = y * (1 + width * 3) + 1; // each PNG row starts with filter type 0
    for (let x = 0; x < width; x++) {
      raw[out + 3 * x] = xwd[row + step * x + 2];
      raw[out + 3 * x + 1] = xwd[row + step * x + 1];
      raw[out + 3 * x + 2] = xwd[row + step * x];
    }
  }
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length);
    head.write(type, 4, "latin1");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, not interlaced
  writeFileSync(
    file,
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("IDAT", deflateSync(raw)),
      chunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** Settings → a section (`settings-section-<key>`: general, model, objects, people, studio, mcp,
 * tools), waited for until its page shows. */
export async function openSettings(browser, section) {
  await browser.$('[data-testid="nav-settings"]').click();
  const button = browser.$(`[data-testid="settings-section-${section}"]`);
  await button.waitForDisplayed({ timeout: 15000 });
  await button.click();
  await browser.$(`[data-testid="settings-page-${section}"]`).waitForExist({ timeout: 15000 });
}

const AXE = readFileSync(new URL("./node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

/**
 * An accessibility audit of the screen on show, by axe-core run inside the real window, in the
 * light and the dark theme (the app's `data-theme`, as Settings → General sets it): the serious
 * and critical violations of WCAG 2.1 A and AA, each with up to five of its elements. Each audit
 * is appended to $SCREENSHOT_DIR/axe-report.json. The theme is put back as it was.
 */
export async function audit(browser, screen) {
  const loaded = await browser.execute(() => typeof window.axe !== "undefined");
  // The source is the WebDriver script itself: the page's CSP forbids eval, as it should.
  if (!loaded) await browser.execute(`${AXE}\nreturn typeof window.axe;`);
  const result = {};
  for (const theme of ["light", "dark"]) {
    result[theme] = await browser.executeAsync((theme, done) => {
      document.documentElement.setAttribute("data-theme", theme);
      window.dispatchEvent(new Event("countersign-theme-changed"));
      requestAnimationFrame(() =>
        window.axe
          .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] })
          .then((r) =>
            done(
              r.violations
                .filter((v) => v.impact === "serious" || v.impact === "critical")
                .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(" ")} ${n.failureSummary ?? ""}`.trim()) })),
            ),
          )
          .catch((e) => done([{ id: "axe-error", impact: "critical", help: String(e), nodes: [] }])),
      );
    }, theme);
  }
  await browser.execute(() => {
    const t = localStorage.getItem("countersign.theme");
    if (t) document.documentElement.setAttribute("data-theme", t);
    else document.documentElement.removeAttribute("data-theme");
    window.dispatchEvent(new Event("countersign-theme-changed"));
  });
  const dir = process.env.SCREENSHOT_DIR ?? "target/e2e-screenshots";
  const file = `${dir}/axe-report.json`;
  let report = [];
  try {
    report = JSON.parse(readFileSync(file, "utf8"));
  } catch {}
  report.push({ screen, light: result.light, dark: result.dark });
  writeFileSync(file, JSON.stringify(report, null, 2));
  return result;
}
