// The assistant in the app with the real 1.5B model (scripts/e2e.sh starts it and pins it in a
// fresh demo workspace): a question answered as a table, "the biggest one" summarized with its
// checks, "mark it …" a proposal, accepted from the review screen (saved) and undone; then a
// document dropped on the panel and extracted into a proposal. Each turn's latency (launch
// excluded) is written to $SCREENSHOT_DIR/assistant.json. Then a real MCP server from the npm
// registry (@modelcontextprotocol/server-filesystem) is connected in Settings → Tools, its
// read tool allowed, and a question about a file is answered by calling it. Last, an HTTP tool
// that changes something outside pauses the turn until Ava approves it in the conversation.
//
// The issue that asked for this named Monarch Holdings' overdue invoices and the status
// "disputed"; in the demo Monarch Holdings has no overdue invoice and "disputed" is a retired
// status (a proposal never sets a retired value), so the same conversation is held on
// opportunities in negotiation and the stage "closed won".
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { openWindow, screenshot, openSettings } from "./window.mjs";

const APP = process.env.APP_BIN;
const SHOTS = process.env.SCREENSHOT_DIR ?? "target/e2e-screenshots";
const tid = (id) => `[data-testid="${id}"]`;

const csv = readFileSync(new URL("../../fixtures/demo/data/opportunity.csv", import.meta.url), "utf8").trim().split("\n");
const head = csv[0].split(",");
const rows = csv.slice(1).map((l) => Object.fromEntries(l.split(",").map((v, i) => [head[i], v])));
const negotiation = rows.filter((r) => r.stage === "negotiation");
const biggest = negotiation.reduce((a, b) => (Number(b.amount) > Number(a.amount) ? b : a));

test("a conversation: a table, a checked summary of the biggest one, a proposal accepted and undone", async () => {
  const browser = await openWindow(APP);
  const el = (id) => browser.$(tid(id));
  const count = (id) => browser.execute((s) => document.querySelectorAll(s).length, tid(id));
  const turns = [];
  async function say(text, until) {
    const before = await count("assistant-you");
    const failedBefore = await count("assistant-failure");
    const t0 = Date.now();
    await el("assistant-input").setValue(text);
    await el("assistant-send").click();
    await browser.waitUntil(async () => (await count("assistant-you")) > before && !(await el("assistant-progress").isExisting()), {
      timeout: 300000,
      interval: 250,
      timeoutMsg: `no answer to "${text}"`,
    });
    turns.push({ text, ms: Date.now() - t0 });
    // A failure of this turn (an earlier turn's stays in the conversation).
    const failure = (await count("assistant-failure")) > failedBefore;
    assert.ok(!failure || until === "assistant-failure", failure ? await el("assistant-messages").getText() : "");
    assert.ok(await el(until).isExisting(), await el("assistant-messages").getText());
  }
  try {
    await el("nav-assistant").waitForDisplayed({ timeout: 60000 });
    await el("nav-assistant").click();
    await el("assistant-input").waitForDisplayed();

    await say("Which opportunities are in negotiation?", "assistant-step-table");
    const table = (part) =>
      browser.execute((p) => [...document.querySelectorAll(`[data-testid="assistant-step-table"] ${p}`)].map((e) => e.textContent.replace(/\s+/g, " ").trim()), part);
    assert.equal((await table('[data-testid="ask-result"] tbody tr')).length, negotiation.length);
    // As Ask shows an answer: the spec as chips with labels ("Stage = Negotiation", not the
    // keys), labelled columns.
    // (The object's labels load beside the conversation: waited for.)
    await browser.waitUntil(async () => /Stage\b.*Negotiation/.test((await table('[data-testid="ask-spec"]'))[0] ?? ""), {
      timeout: 10000,
      timeoutMsg: `chips: ${JSON.stringify(await table('[data-testid="ask-spec"]'))}`,
    });
    const headers = await table('[data-testid="ask-result"] th');
    assert.ok(headers.length > 0 && headers.every((h) => !/_/.test(h)), JSON.stringify(headers));
    // A changed chip runs again and the conversation keeps the new set (a limit above the
    // count keeps every row, so "the biggest one" below is the same).
    await browser.execute(() => {
      const limit = document.querySelector('[data-testid="assistant-step-table"] [data-testid="ask-limit"]');
      limit.value = "500";
      limit.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await browser.$(`${tid("assistant-step-table")} ${tid("ask-rerun")}`).click();
    await browser.waitUntil(async () => /filters changed/.test(await el("assistant-step-table").getText()), { timeout: 10000, timeoutMsg: "not revised" });
    assert.equal((await table('[data-testid="ask-result"] tbody tr')).length, negotiation.length);
    screenshot(join(SHOTS, "50-assistant-table.png"));

    // The summary is checked: verified, or refused with the checker's reasons (for this
    // opportunity the 1.5B writes the slot {next_step} as the word "nextstep", which the word
    // check refuses, twice). Either way the turn points at the biggest one.
    const before = await count("assistant-you");
    await el("assistant-input").setValue("Summarize the biggest one");
    await el("assistant-send").click();
    await browser.waitUntil(async () => (await count("assistant-you")) > before && !(await el("assistant-progress").isExisting()), {
      timeout: 300000,
      interval: 250,
      timeoutMsg: "no answer to the summary",
    });
    if (await el("assistant-summary").isExisting()) {
      assert.match(await el("assistant-step-summary").getText(), new RegExp(biggest.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
      assert.ok((await el("assistant-summary").getText()).length > 20);
    } else {
      assert.match(await el("assistant-failure").getText(), /the summary was refused: .*which is no English word|the summary was refused: .*without its braces/);
    }
    screenshot(join(SHOTS, "51-assistant-summary.png"));

    await say("Mark it as closed won", "assistant-proposal");
    await browser.waitUntil(async () => /Stage: Negotiation → Closed Won/.test(await el("assistant-proposal").getText()), {
      timeout: 10000,
      timeoutMsg: `proposal: ${await el("assistant-proposal").getText()}`,
    });
    screenshot(join(SHOTS, "52-assistant-proposal.png"));

    // Accepted as the reviewer's own save, then undone.
    await el("assistant-review").click();
    await el("review-accept-all").waitForDisplayed({ timeout: 10000 });
    await el("review-accept-all").click();
    await browser.waitUntil(async () => /accepted/.test(await el("review-state").getText()), { timeout: 10000 });
    await el("review-open-record").click();
    await browser.waitUntil(async () => /Closed Won/.test(await el("value-stage").getText()), { timeout: 10000, timeoutMsg: "not saved" });
    await el("tab-history").click();
    await el("history-undo").waitForDisplayed();
    await el("history-undo").click();
    await browser.waitUntil(async () => /Undone/.test(await el("history-notice").getText()), { timeout: 10000 });
    await el("tab-details").click();
    await browser.waitUntil(async () => /Negotiation/.test(await el("value-stage").getText()), { timeout: 10000, timeoutMsg: "not undone" });
    screenshot(join(SHOTS, "53-assistant-undone.png"));

    // A document dropped on the panel goes with the next message: extracted into a proposal.
    // (The panel stays open beside the record page.)
    assert.ok(await el("assistant-panel").isExisting());
    const doc = readFileSync(new URL("../../fixtures/demo/documents/INV-2026-50946.txt", import.meta.url), "utf8");
    await browser.execute((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], "INV-2026-50946.txt", { type: "text/plain" }));
      document.querySelector('[data-testid="assistant-panel"]').dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, doc);
    await browser.waitUntil(async () => /INV-2026-50946\.txt/.test(await el("assistant-attached").getText()), { timeout: 5000 });
    await say("Extract this document into a new invoice", "assistant-proposal");
    const extracted = await browser.execute(() => [...document.querySelectorAll('[data-testid="assistant-step-proposal"]')].map((s) => s.dataset.action));
    assert.equal(extracted[extracted.length - 1], "extract", JSON.stringify(extracted));
    screenshot(join(SHOTS, "54-assistant-extract.png"));
  } finally {
    writeFileSync(join(SHOTS, "assistant.json"), JSON.stringify({ turns }, null, 2));
    console.log("assistant turns", JSON.stringify(turns));
    await browser.deleteSession();
  }
});

test("a tool from an MCP server: connected in Settings → Tools, its tools reviewed and one allowed, a file read in an assistant turn", async () => {
  const dir = mkdtempSync(join(tmpdir(), "countersign-mcp-"));
  const file = join(dir, "warehouse.txt");
  writeFileSync(file, "The Leeds warehouse opens at 07:30 on weekdays. The gate code is 4417.\n");
  const server = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
  const browser = await openWindow(APP);
  const el = (id) => browser.$(tid(id));
  try {
    await el("user-switcher").waitForDisplayed({ timeout: 60000 });
    await el("user-switcher").selectByAttribute("value", "ava");
    await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
    await openSettings(browser, "tools");
    await el("tool-server-name").waitForDisplayed({ timeout: 10000 });
    await el("tool-server-name").scrollIntoView();
    await el("tool-server-name").setValue("files");
    await el("tool-server-command").setValue(process.execPath);
    // One argument per line (the driver types a line break as the Enter key).
    await el("tool-server-args").setValue(server);
    await browser.keys("Enter");
    await el("tool-server-args").addValue(dir);
    await el("tool-server-inspect").click();
    await el("tool-server-review-list").waitForDisplayed({ timeout: 60000 });
    // Each tool with the effect its hints suggest, for the admin to confirm.
    const proposed = await browser.execute(() =>
      Object.fromEntries([...document.querySelectorAll('[data-testid="tool-server-review-tool"]')].map((r) => [r.dataset.tool, r.querySelector("select")?.value])),
    );
    assert.equal(proposed.read_text_file, "reads_outside", JSON.stringify(proposed));
    assert.equal(proposed.write_file, "changes_outside", JSON.stringify(proposed));
    screenshot(join(SHOTS, "55-mcp-review.png"));
    await el("tool-server-pin").click();
    await browser.waitUntil(async () => /files: \d+ tool\(s\) kept/.test(await el("tool-server-notice").getText()), { timeout: 60000, timeoutMsg: "not pinned" });
    // Listed beside the kernel's own, refused until allowed; the read tool is allowed.
    const row = browser.$('[data-testid="tool-row"][data-name="files_read_text_file"]');
    await row.waitForDisplayed({ timeout: 10000 });
    assert.match(await row.getText(), /mcp/);
    assert.equal(await row.$('[data-testid="tool-policy"]').getValue(), "block");
    await row.scrollIntoView();
    await row.$('[data-testid="tool-policy"]').selectByAttribute("value", "allow");
    await browser.waitUntil(async () => /files_read_text_file: saved as version 2/.test(await el("tools-notice").getText()), { timeout: 10000 });
    screenshot(join(SHOTS, "56-mcp-tools.png"));

    // A new conversation: the question names the file; the assistant calls the server's tool.
    await el("nav-assistant").click();
    await el("assistant-input").waitForDisplayed();
    await el("assistant-conversations").selectByAttribute("value", "");
    const t0 = Date.now();
    await el("assistant-input").setValue(`What does the file ${file} say?`);
    await el("assistant-send").click();
    await browser.waitUntil(async () => (await el("assistant-you").isExisting()) && !(await el("assistant-progress").isExisting()), {
      timeout: 300000,
      interval: 250,
      timeoutMsg: "no answer",
    });
    const ms = Date.now() - t0;
    const messages = await el("assistant-messages").getText();
    assert.ok(await el("assistant-tool-output").isExisting(), messages);
    assert.equal(await el("assistant-tool").getAttribute("data-tool"), "files_read_text_file");
    assert.match(await el("assistant-tool-output").getText(), /gate code is 4417/);
    // The tool's answer is the answer, as the server gave it: the model does not restate it.
    assert.ok(!(await el("assistant-step-reply").isExisting()), messages);
    screenshot(join(SHOTS, "57-assistant-mcp-tool.png"));
    console.log("assistant mcp turn ms", ms);
  } catch (e) {
    screenshot(join(SHOTS, "57-mcp-failed.png"));
    throw e;
  } finally {
    await browser.deleteSession();
  }
});

test("a change outside waits for approval: the turn pauses with every argument, approved in the conversation it runs once and the turn ends with its answer", async () => {
  const requests = [];
  const target = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      requests.push({ key: req.headers["idempotency-key"], body: JSON.parse(body || "null") });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ posted: true, id: "msg_7" }));
    });
  });
  await new Promise((r) => target.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${target.address().port}`;
  const inputs = JSON.stringify({ type: "object", properties: { message: { type: "string" } }, required: ["message"], additionalProperties: false });
  execFileSync(process.env.CLI_BIN, ["--workspace", process.env.COUNTERSIGN_WORKSPACE, "--as", "ava", "tool", "add-http", "post_to_team",
    "--description", "Post a message to the team's chat channel.", "--effect", "changes_outside", "--url", `${url}/messages`,
    "--inputs", inputs, "--body", '{"text":"{message}"}', "--policy", "ask", "--capability", "assistant", "--deduplicates"]);
  const browser = await openWindow(APP);
  const el = (id) => browser.$(tid(id));
  const idle = (timeoutMsg) =>
    browser.waitUntil(async () => (await el("assistant-you").isExisting()) && !(await el("assistant-progress").isExisting()), { timeout: 300000, interval: 250, timeoutMsg });
  try {
    await el("user-switcher").waitForDisplayed({ timeout: 60000 });
    await el("user-switcher").selectByAttribute("value", "ava");
    await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
    await el("nav-assistant").click();
    await el("assistant-input").waitForDisplayed();
    await el("assistant-conversations").selectByAttribute("value", "");
    await el("assistant-input").setValue('Post the message "The Leeds gate code changed" to the team channel.');
    await el("assistant-send").click();
    await idle("no answer");
    const messages = await el("assistant-messages").getText();
    assert.equal(await el("assistant-tool").getAttribute("data-tool"), "post_to_team", messages);
    assert.equal(await el("assistant-tool").getAttribute("data-state"), "waiting", messages);
    await el("tool-approve").waitForDisplayed({ timeout: 10000 });
    assert.match(await el("tool-approval-arguments").getText(), /Leeds gate code/);
    assert.equal(requests.length, 0, "nothing is sent before the approval");
    screenshot(join(SHOTS, "58-assistant-tool-waiting.png"));
    await el("tool-approve").click();
    await el("assistant-tool-output").waitForDisplayed({ timeout: 120000 });
    await idle("the turn did not go on");
    assert.match(await el("assistant-tool-output").getText(), /msg_7/);
    assert.equal(requests.length, 1);
    assert.match(requests[0].key, /:1:post_to_team$/);
    assert.match(requests[0].body.text, /Leeds gate code/);
    screenshot(join(SHOTS, "59-assistant-tool-approved.png"));
  } catch (e) {
    screenshot(join(SHOTS, "59-tool-approval-failed.png"));
    throw e;
  } finally {
    target.close();
    await browser.deleteSession();
  }
});

test("in German: Ava chooses Deutsch in Settings, an invoice's summary is written in German with German dates and amounts and verified, and Ask answers “Rechnungen im März 2026”", async () => {
  const invoices = readFileSync(new URL("../../fixtures/demo/data/invoice.csv", import.meta.url), "utf8").trim().split("\n");
  const cols = invoices[0].split(",");
  const inMarch = (field) => invoices.slice(1).filter((l) => (l.split(",")[cols.indexOf(field)] ?? "").startsWith("2026-03")).length;
  const expected = ["issue_date", "due_date", "paid_date"].map(inMarch);
  const browser = await openWindow(APP);
  const el = (id) => browser.$(tid(id));
  try {
    await el("user-switcher").waitForDisplayed({ timeout: 60000 });
    await el("user-switcher").selectByAttribute("value", "ava");
    await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
    await openSettings(browser, "general");
    await el("own-locale").waitForDisplayed();
    await el("own-locale").selectByAttribute("value", "de-DE");
    await browser.waitUntil(async () => (await el("locale-now").getText()) === "Deutsch (Deutschland)", { timeoutMsg: "the locale was not chosen" });
    screenshot(join(SHOTS, "60-settings-locale-de.png"));

    // An invoice the 1.5B summarizes in German words only (for an account it invents a word for
    // "opportunities", "Geschäftspotentien", which the check refuses).
    await el("nav-invoice").click();
    await el("list-search").waitForDisplayed();
    await el("list-search").setValue("INV-2025-00001");
    // The row is clicked until the record opens (the search may still move it when it first shows).
    await browser.waitUntil(
      async () => {
        if (await el("record-title").isExisting()) return (await el("record-title").getText()).includes("INV-2025-00001");
        if (await el("row-inv_0001").isExisting()) await el("row-inv_0001").click().catch(() => {});
        return false;
      },
      { timeout: 30000, interval: 500, timeoutMsg: "INV-2025-00001 did not open" },
    );
    await el("summarize").click();
    await browser.waitUntil(async () => (await el("summary-verified").isExisting()) || (await el("summary-error").isExisting()), {
      timeout: 240000,
      interval: 200,
      timeoutMsg: "the summary never finished",
    });
    const summary = await el("summary-panel").getText();
    assert.ok(await el("summary-verified").isExisting(), `refused: ${summary}`);
    // German prose, or — where its words did not say what a value is — the kernel's clauses
    // under the demo's German field labels.
    assert.match(summary, /\b(hat|ist|sind|mit|der|die|das|und|von|Rechnungsbetrag|Rechnungsdatum|Fälligkeitsdatum|Zahlungsdatum|Konto)\b/, `not German: ${summary}`);
    assert.doesNotMatch(summary, /\d,\d{3}\.\d{2}/, `an amount written the English way: ${summary}`);
    const german = /\d{1,3}(\.\d{3})*,\d{2} [A-Z]{3}|\d{1,2}\. (Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember) \d{4}/;
    const cited = await browser.execute(() => [...document.querySelectorAll('[data-testid="summary-citation"]')].map((c) => c.textContent));
    assert.ok(cited.length > 0, summary);
    assert.match(summary, german, `no German date or amount: ${summary}`);
    screenshot(join(SHOTS, "61-summary-de.png"));

    await browser.execute(() =>
      window.dispatchEvent(new KeyboardEvent("keydown", { key: "k", code: "KeyK", ctrlKey: true, bubbles: true })),
    );
    await browser.waitUntil(async () => (await browser.execute(() => document.activeElement?.dataset.testid)) === "ask-bar");
    await el("ask-bar").setValue("Rechnungen im März 2026");
    await browser.keys("Enter");
    await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()), {
      timeout: 180000,
      timeoutMsg: "Ask never answered",
    });
    assert.ok(await el("ask-result").isExisting(), await el("ask-panel").getText());
    const rows = await browser.execute(() =>
      [...document.querySelectorAll('[data-testid="ask-result"] tbody tr')].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent.trim()).join(" | ")),
    );
    assert.ok(expected.includes(rows.length), `${rows.length} rows; invoices in March 2026 by issue, due and paid date: ${expected}`);
    assert.match(rows.join(" | "), /(^| )\d{2}\.03\.2026( |$)/, `dates as a German reader writes them: ${rows[0]}`);
    screenshot(join(SHOTS, "62-ask-de.png"));
    // A German "not": the chip is the negation, in the reader's German labels.
    await el("ask-bar").setValue("Rechnungen, die nicht bezahlt sind");
    await browser.keys("Enter");
    await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()) || (await el("ask-clarification").isExisting()), {
      timeout: 180000,
      timeoutMsg: "Ask never answered the German not question",
    });
    assert.ok(await el("ask-result").isExisting(), await el("ask-panel").getText());
    const chip = await el("ask-chip-status").getText();
    assert.match(chip, /Status\s*≠\s*Bezahlt/, chip);
    screenshot(join(SHOTS, "63-ask-de-not.png"));
  } catch (e) {
    screenshot(join(SHOTS, "62-locale-failed.png"));
    throw e;
  } finally {
    await openSettings(browser, "general");
    await el("own-locale").waitForDisplayed();
    await el("own-locale").selectByAttribute("value", "");
    await browser.deleteSession();
  }
});

test("a judged assertion in the studio: a rubric added to the Summarize suite in the editor, a prompt version's run judged case by case below its floor, and the version refused activation", async () => {
  // A small suite gates Summarize (the latest one published for it): two accounts with an open
  // pipeline, as Ava.
  const cli = (...args) => execFileSync(process.env.CLI_BIN, ["--workspace", process.env.COUNTERSIGN_WORKSPACE, "--as", "ava", ...args], { encoding: "utf8" });
  const dir = mkdtempSync(join(tmpdir(), "judged-"));
  const file = join(dir, "suite.json");
  const cases = ["acc_0016", "acc_0004"].map((id) => ({ id, user: "ava", input: { object: "account", id }, expect: {}, hard: false }));
  writeFileSync(file, JSON.stringify({ capability: "summarize", floor: 0.5, cases }));
  cli("eval", "publish", "summarize-judged", "--file", file);
  const browser = await openWindow(APP);
  const el = (id) => browser.$(tid(id));
  try {
    await el("user-switcher").waitForDisplayed({ timeout: 60000 });
    await el("user-switcher").selectByAttribute("value", "ava");
    await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
    await openSettings(browser, "studio");
    await el("studio-cap-summarize").waitForDisplayed({ timeout: 15000 });
    // The rubric, written in the studio's suite editor.
    await el("studio-suite-edit-summarize").scrollIntoView();
    await el("studio-suite-edit-summarize").click();
    // A criterion concrete enough for the 1.5B model to judge (it judges "the money that matters
    // most" no better than chance: see the calibration in the README), and a floor every case
    // must reach.
    await el("studio-suite-rubric-summarize").setValue("It states an amount of money: a number followed by a currency code such as USD or EUR.");
    await el("studio-suite-judged-floor-summarize").setValue("100");
    await el("studio-suite-publish-summarize").click();
    await el("studio-suite-judged-summarize").waitForDisplayed({ timeout: 10000 });
    assert.match(await el("studio-suite-judged-summarize").getText(), /judged on 1 criterion, floor 100/);
    // A version whose summaries the checks verify but that say nothing that matters.
    const versions = async () =>
      browser.execute(() => [...document.querySelectorAll('[data-testid^="studio-version-summarize-"]')].map((r) => Number(r.dataset.testid.split("-").pop())));
    const before = Math.max(...(await versions()));
    await el("studio-new-version-summarize").scrollIntoView();
    await el("studio-new-version-summarize").click();
    await el("studio-new-instructions-summarize").setValue(
      'Answer with JSON: {"sentences": ["{name} is a record."]} and nothing else: exactly that one sentence, with the slot {name} as written. Never write money, counts, dates or notes.',
    );
    await el("studio-publish-summarize").click();
    await browser.waitUntil(async () => Math.max(...(await versions())) > before, { timeout: 10000 });
    const bland = Math.max(...(await versions()));
    // Its run, on the workspace's model, judged by the judge capability's model (the same one).
    await el("studio-run-version-summarize").selectByAttribute("value", String(bland));
    await el("studio-run-summarize").click();
    await browser.waitUntil(
      async () =>
        browser.execute(
          (v) => [...document.querySelectorAll('[data-testid="studio-run-row-summarize"]')].some((r) => r.dataset.outcome && r.textContent.includes(`v${v}`)),
          bland,
        ),
      { timeout: 600000, interval: 1000, timeoutMsg: "the suite run never finished" },
    );
    const row = await browser.$('[data-testid="studio-run-row-summarize"]');
    assert.equal(await row.getAttribute("data-outcome"), "failed", await row.getText());
    const judged = await el("studio-run-judged-summarize").getText();
    const score = Number(judged.match(/^(\d+) %/)?.[1]);
    assert.ok(score < 100, `judged ${judged}`);
    // The judge's reasons, case by case (the row opens from its first cell's button).
    await row.$("button").scrollIntoView();
    await row.$("button").click();
    await el("studio-run-judgments-summarize").waitForDisplayed();
    const judgments = await el("studio-run-judgments-summarize").getText();
    assert.match(judgments, /acc_0016/);
    assert.match(judgments, /✗ It states an amount of money|no answer to judge/, judgments);
    await el("studio-run-judgments-summarize").scrollIntoView();
    screenshot(join(SHOTS, "63-studio-judged-run.png"));
    // Activation is refused, saying the judged score. (The studio reloads once the run is
    // stored; a refusal shown before that reload is cleared by it, so the click is repeated.)
    await browser.waitUntil(
      async () => {
        await el(`studio-activate-summarize-${bland}`).scrollIntoView();
        await el(`studio-activate-summarize-${bland}`).click();
        return el("gate-refusal").waitForDisplayed({ timeout: 4000 }).then(
          () => true,
          () => false,
        );
      },
      { timeout: 30000, interval: 500, timeoutMsg: "activation was not refused" },
    );
    assert.match(await el("gate-refusal").getText(), /judged \d+ % against its floor of 100 %/);
    screenshot(join(SHOTS, "64-studio-judged-gate-refused.png"));
  } catch (e) {
    screenshot(join(SHOTS, "64-judged-failed.png"));
    throw e;
  } finally {
    await browser.deleteSession();
  }
});
