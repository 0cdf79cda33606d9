// The invoice list on a million invoices (scripts/e2e.sh makes the workspace with
// `countersign-cli bench --generate-only`: the demo plus 10,000 accounts and 1,000,000
// invoices BINV-0000000 …): open the list, drag the scroll bar to the middle, sort by a column,
// search — each step timed in the page from the input to the rows drawn, with the longest
// frame seen meanwhile (the window never blocks); then a deploy adding a field to the invoices,
// its steps shown, cancelled once, then run, the invoice list opened while it runs; and an
// import of 200,000 accounts put aside while the list is read. Figures go to
// $SCREENSHOT_DIR/scale.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openWindow, screenshot, openSettings } from "./window.mjs";

const APP = process.env.APP_BIN;
const SHOTS = process.env.SCREENSHOT_DIR ?? "target/e2e-screenshots";
const ROWS = Number(process.env.SCALE_ROWS ?? 1_000_000);
const tid = (id) => `[data-testid="${id}"]`;

/**
 * In the page: run `step` (by name, below), then wait frame by frame until the list shows what
 * the step asked for; resolve with the time from the input to that frame, and the longest frame.
 */
function inPage(browser, step, arg) {
  return browser.executeAsync(
    (step, arg, done) => {
      const list = () => document.querySelector('[data-testid="list-invoice"]');
      const drawn = () => [...(list()?.querySelectorAll('[role="row"][data-index]') ?? [])];
      const loading = () => (list()?.querySelectorAll(".row.loading").length ?? 1) > 0;
      let until;
      const t0 = performance.now();
      if (step === "open") {
        document.querySelector('[data-testid="nav-invoice"]').click();
        until = () => drawn().length > 0 && !loading();
      } else if (step === "middle") {
        const body = list().querySelector(".body");
        body.scrollTop = (body.scrollHeight - body.clientHeight) / 2;
        until = () => !loading() && drawn().some((r) => Number(r.dataset.index) > arg * 0.4);
      } else if (step === "sort") {
        // Sorted once the rows from the top are in issue-date order (the first date of a row
        // is its issue date); until then the list shows its rows from before.
        const issued = (r) => r.textContent.match(/\d{4}-\d{2}-\d{2}/)?.[0] ?? "";
        document.querySelector(`[data-testid="col-${arg}"]`).click();
        until = () => {
          const rows = drawn();
          return !loading() && rows.length > 5 && rows[0].dataset.index === "0" && rows.every((r, i) => i === 0 || issued(rows[i - 1]) <= issued(r));
        };
      } else if (step === "search") {
        const box = document.querySelector('[data-testid="list-search"]');
        box.value = arg;
        box.dispatchEvent(new Event("input", { bubbles: true }));
        until = () => !loading() && drawn().length > 0 && drawn().every((r) => r.textContent.includes(arg));
      }
      let last = t0;
      let longest = 0;
      const tick = (now) => {
        longest = Math.max(longest, now - last);
        last = now;
        if (until()) {
          const rows = drawn().map((r) => ({ index: Number(r.dataset.index), text: r.textContent }));
          done({ ms: now - t0, longestFrameMs: longest, rows });
        } else if (now - t0 > 60000) done({ ms: -1, longestFrameMs: longest, rows: [] });
        else requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    },
    step,
    arg,
  );
}

test("a million invoices: open the list, scroll to the middle, sort, search — each timed to the rows drawn; a deploy adding a field shows its steps, cancels, runs while the list reads; an import put aside while the list reads", async () => {
  const browser = await openWindow(APP);
  await browser.$(tid("nav-invoice")).waitForDisplayed({ timeout: 60000 });
  const figures = {};
  const timed = async (name, step, arg) => {
    const r = await inPage(browser, step, arg);
    assert.ok(r.ms >= 0, `${name}: the rows were never drawn`);
    figures[name] = { ms: Math.round(r.ms), longestFrameMs: Math.round(r.longestFrameMs) };
    return r;
  };

  await timed("openList", "open");
  const count = await browser.$(tid("list-count")).getText();
  assert.equal(Number.parseInt(count.replace(/,/g, ""), 10), ROWS + 300, `the count says ${count}`);
  await screenshot(join(SHOTS, "60-scale-list.png"));

  // The middle of the list by number: row k is BINV-k (the demo's INV- numbers sort after).
  const middle = await timed("scrollToMiddle", "middle", ROWS);
  const shown = middle.rows.filter((r) => r.index < ROWS);
  assert.ok(shown.length > 5, "rows half-way down are drawn");
  for (const r of shown) assert.ok(r.text.includes(`BINV-${String(r.index).padStart(7, "0")}`), `row ${r.index} shows ${r.text}`);
  const mid = shown[Math.floor(shown.length / 2)].index;
  assert.ok(Math.abs(mid - ROWS / 2) < ROWS * 0.01, `the middle row is ${mid}`);
  await screenshot(join(SHOTS, "61-scale-middle.png"));

  // Sorted by issue date (a date: indexed by deploy): the first rows are the earliest.
  const sorted = await timed("sortByIssueDate", "sort", "issue_date");
  const dates = sorted.rows.map((r) => r.text.match(/\d{4}-\d{2}-\d{2}/)?.[0] ?? "");
  assert.ok(dates.every(Boolean) && dates.every((d, i) => i === 0 || dates[i - 1] <= d), `dates shown: ${dates.join(" | ")}`);
  await screenshot(join(SHOTS, "62-scale-sorted.png"));

  // A search by number: one invoice among a million, found through the name index.
  const found = await timed("search", "search", "BINV-0500123");
  assert.equal(found.rows.length, 1, found.rows.map((r) => r.text).join(" | "));
  await screenshot(join(SHOTS, "63-scale-search.png"));

  // A deploy that adds a field to the million-row invoices: its steps show while it runs (the
  // backup of the file alone takes seconds), Cancel stops it with nothing changed, and the
  // deploy run again finishes with the field added.
  const el = (id) => browser.$(tid(id));
  await openSettings(browser, "objects");
  await el("objects-editor").waitForDisplayed({ timeout: 15000 });
  await browser.$('[data-testid="object-item"][data-key="invoice"]').click();
  await browser.waitUntil(async () => (await el("object-label").getValue()) === "Invoice");
  await el("new-field-label").setValue("Region");
  await el("new-field-add").click();
  await el("deploy-preview").click();
  await el("deploy-preview-panel").waitForDisplayed({ timeout: 60000 });
  assert.match(await el("deploy-preview-panel").getText(), /Adds field invoice.region/);
  await el("deploy-run").click();
  await el("deploy-progress").waitForDisplayed({ timeout: 10000 });
  assert.match(await el("deploy-progress").getText(), /Backing up the workspace \(step 1 of 4\)/);
  await screenshot(join(SHOTS, "64-scale-deploy-progress.png"));
  await el("deploy-cancel").click();
  await browser.waitUntil(async () => (await el("deploy-bar").getText()).includes("Deploy cancelled; nothing was changed."), {
    timeout: 120000,
    timeoutMsg: "the cancelled deploy never ended",
  });
  await el("deploy-preview").click();
  await el("deploy-preview-panel").waitForDisplayed({ timeout: 60000 });
  const started = Date.now();
  await el("deploy-run").click();
  const steps = new Set();
  // While it runs, the rest of the app reads: the invoice list opens (the deploy writes on a
  // connection of its own), and Settings shows the deploy still going on, then done.
  await el("deploy-progress").waitForDisplayed({ timeout: 10000 });
  await timed("openListDuringDeploy", "open");
  figures.openListDuringDeploy.drawnAtMs = Date.now() - started;
  await openSettings(browser, "objects");
  await el("deploy-bar").waitForDisplayed({ timeout: 15000 });
  await browser.waitUntil(
    async () => {
      const bar = await el("deploy-bar").getText();
      const step = bar.match(/\(step (\d) of 4\)/)?.[1];
      if (step) steps.add(step);
      return bar.includes("Deployed generation");
    },
    { timeout: 180000, interval: 100, timeoutMsg: "the deploy never finished" },
  );
  figures.deployAddField = { ms: Date.now() - started, stepsSeen: [...steps].sort() };
  assert.ok(figures.openListDuringDeploy.drawnAtMs < figures.deployAddField.ms, "the list was drawn before the deploy ended");

  // An import of many accounts put aside ("Keep working"): the invoice list opens and reads
  // while it runs (the import writes on a connection of its own), the chip shows its progress,
  // then what it imported, and brings the dialog back.
  const N = 200_000;
  const csvPath = join(mkdtempSync(join(tmpdir(), "countersign-scale-")), "accounts.csv");
  const lines = ["name,industry,billing_city"];
  for (let i = 0; i < N; i++) lines.push(`Imported Account ${i},software,Lyon`);
  writeFileSync(csvPath, lines.join("\n") + "\n");
  await el("nav-account").click();
  await el("import-open").click();
  await el("import-file").setValue(csvPath);
  await browser.waitUntil(async () => (await el("import-preview").isExisting()) && (await el("import-preview").getText()).includes(`${N} row(s): ${N} ready`), {
    timeout: 300000,
    interval: 250,
    timeoutMsg: "the import's check never ended",
  });
  const importStarted = Date.now();
  await el("import-run").click();
  await el("import-aside").waitForClickable({ timeout: 10000 });
  await el("import-aside").click();
  await el("import-chip").waitForDisplayed({ timeout: 10000 });
  await timed("openListDuringImport", "open");
  figures.openListDuringImport.drawnAtMs = Date.now() - importStarted;
  assert.match(await el("import-chip").getText(), /Importing Accounts|imported/);
  await screenshot(join(SHOTS, "65-scale-import-aside.png"));
  await browser.waitUntil(async () => (await el("import-chip").getText()).includes(`imported ${N} record(s).`), {
    timeout: 600000,
    interval: 250,
    timeoutMsg: "the import put aside never ended",
  });
  figures.importAside = { ms: Date.now() - importStarted, rows: N };
  assert.ok(figures.openListDuringImport.drawnAtMs < figures.importAside.ms, "the list was drawn before the import ended");
  await el("import-show").click();
  assert.match(await el("import-result").getText(), new RegExp(`Imported ${N} record\\(s\\)`));
  await browser.$("button=Done").click();

  writeFileSync(join(SHOTS, "scale.json"), JSON.stringify(figures, null, 2));
  console.log("e2e scale", JSON.stringify(figures));
  await browser.deleteSession();
});
