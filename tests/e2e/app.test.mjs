// End-to-end tests of the real app: the Tauri binary in a real window (Xvfb), driven through
// tauri-driver + WebKitWebDriver by WebdriverIO. Run by scripts/e2e.sh, which builds the app,
// starts the display, D-Bus and the driver, and points the app at a fresh demo workspace.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appMemory, audit, openWindow, screenshot, openSettings } from "./window.mjs";

const APP = process.env.APP_BIN;
const SHOTS = process.env.SCREENSHOT_DIR ?? "target/e2e-screenshots";
assert.ok(APP, "APP_BIN must name the app binary");
mkdirSync(SHOTS, { recursive: true });

let browser;
const metrics = {};

const tid = (id) => `[data-testid="${id}"]`;
const el = (id) => browser.$(tid(id));
async function shot(name) {
  await browser.pause(250); // let the last change paint before the capture
  screenshot(join(SHOTS, `${name}.png`));
}
/** Serious or critical accessibility violations found so far, by screen and theme (`a11y`). */
const axeFound = [];
/** Audit the screen on show in both themes (axe-core in the window); the last test asserts none. */
async function a11y(screen) {
  const r = await audit(browser, screen);
  for (const theme of ["light", "dark"]) for (const v of r[theme]) axeFound.push({ screen, theme, ...v });
}
async function waitText(id, expected, timeout = 10000) {
  await browser.waitUntil(async () => (await el(id).getText()).includes(expected), {
    timeout,
    timeoutMsg: `${id} never showed "${expected}"`,
  });
}
async function openAccount(name, id) {
  await el("nav-account").click();
  await el("list-search").waitForDisplayed();
  await searchList(name);
  await el(`row-${id}`).click();
  await waitText("record-title", name);
}

/**
 * Type into the list's search and wait until it has run: every row shown is a match. (A row may
 * be on screen before the search runs, at another place: a click there would land beside it.)
 */
async function searchList(text) {
  await el("list-search").setValue(text);
  await browser.waitUntil(
    async () => {
      const shown = await rowTexts();
      return shown.length > 0 && shown.every((t) => t.includes(text));
    },
    { timeout: 10000, timeoutMsg: `the search for ${text} never showed` },
  );
}

/** The text of every rendered list row, read in the page (one round trip). */
function rowTexts() {
  return browser.execute(() => [...document.querySelectorAll('[role="row"][data-index]')].map((r) => r.textContent));
}

/** How many records the list on screen holds once loaded ("12 records", "10,000+ records": a capped count). */
async function listCount() {
  await browser.waitUntil(async () => (await rowTexts()).length > 0 || (await el("list-empty").isExisting()), {
    timeoutMsg: "the list never loaded",
  });
  const text = await el("list-count").getText();
  return { n: Number.parseInt(text.replace(/,/g, ""), 10), more: text.includes("+") };
}

before(async () => {
  const t0 = Date.now();
  browser = await openWindow(APP);
  await el("row-acc_0003").waitForDisplayed({ timeout: 30000 });
  metrics.coldStartToFirstListMs = Date.now() - t0;
  await browser.pause(2000);
  metrics.idleAfterStart = appMemory(APP);
});

after(async () => {
  if (browser) {
    metrics.afterSuite = appMemory(APP);
    writeFileSync(join(SHOTS, "metrics.json"), JSON.stringify(metrics, null, 2));
    console.log("e2e metrics", JSON.stringify(metrics));
    await browser.deleteSession();
  }
});

test("the demo workspace opens on the accounts list", async () => {
  assert.equal(await el("user-switcher").getValue(), "ava");
  const headers = await browser.$$('[role="columnheader"]').map((h) => h.getText());
  assert.ok(headers[0].startsWith("Account Name"), headers.join("|"));
  await shot("01-accounts-list");
  // Sorting by a column goes through the kernel: the first row changes.
  await el("col-name").click();
  await browser.waitUntil(async () => (await el("col-name").getText()).includes("▼"));
  await shot("02-accounts-sorted-desc");
});

test("open an account, edit a field, and the history tab shows the change", async () => {
  await openAccount("Globex Holdings", "acc_0001");
  await el("field-credit_limit").waitForDisplayed();
  await shot("03-record-page");
  await el("edit-billing_city").click();
  await el("input-billing_city").setValue("Lisbon");
  await el("save-billing_city").click();
  await waitText("value-billing_city", "Lisbon");
  await el("tab-history").click();
  await el("history").waitForDisplayed();
  const rows = await browser.$$(tid("history-row"));
  const first = await rows[0].getText();
  assert.match(first, /Billing City/);
  assert.match(first, /Munich/);
  assert.match(first, /Lisbon/);
  assert.match(first, /ava/);
  await shot("04-history-tab");
});

test("an invalid edit shows the rule's message on the field", async () => {
  await el("tab-details").click();
  await el("edit-annual_revenue").click();
  await el("input-annual_revenue").setValue("-5");
  await el("save-annual_revenue").click();
  await el("error-annual_revenue").waitForDisplayed();
  assert.equal(await el("error-annual_revenue").getText(), "Annual revenue cannot be negative.");
  await shot("05-invalid-edit");
  // Too many decimals for the field's scale is refused on the field too, nothing rounded.
  await el("input-annual_revenue").setValue("1000.005");
  await el("save-annual_revenue").click();
  await waitText("error-annual_revenue", "decimal places");
});

test("as ben (sales rep) the credit limit is not on the page", async () => {
  await el("user-switcher").selectByAttribute("value", "ben");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ben");
  await openAccount("Globex Holdings", "acc_0001");
  await el("field-name").waitForDisplayed();
  assert.equal(await el("field-credit_limit").isExisting(), false);
  assert.equal(await el("field-tax_id").isExisting(), false);
  assert.equal(await el("field-annual_revenue").isExisting(), true);
  await shot("06-ben-record-page");
  // His own change history does not show fields he cannot read either.
  await el("tab-history").click();
  await el("history").waitForDisplayed();
  const fields = await browser.$$(tid("history-field")).map((f) => f.getText());
  assert.ok(!fields.includes("Credit Limit"), fields.join("|"));
  assert.ok(fields.includes("Billing City"));
});

test("ben sees only his own opportunities", async () => {
  await el("nav-opportunity").click();
  await el("list-opportunity").waitForDisplayed();
  await browser.waitUntil(async () => (await browser.$$('[role="row"][data-index]').length) > 0);
  const ids = await browser.$$('[role="row"][data-index]').map((r) => r.getAttribute("data-testid"));
  const csv = readFileSync(new URL("../../fixtures/demo/data/opportunity.csv", import.meta.url), "utf8").trim().split("\n").slice(1);
  const bens = new Set(csv.filter((l) => l.split(",")[1] === "ben").map((l) => `row-${l.split(",")[0]}`));
  assert.ok(ids.length > 0);
  for (const id of ids) assert.ok(bens.has(id), `${id} is not ben's`);
  await shot("07-ben-opportunities");
});

test("keyboard: / searches, arrows move, Enter opens, Esc goes back", async () => {
  await el("nav-contact").click();
  await el("list-contact").waitForDisplayed();
  await browser.keys("/");
  await browser.keys("Kowalski".split(""));
  await browser.waitUntil(async () => {
    const texts = await rowTexts();
    return texts.length > 0 && texts.every((t) => t.includes("Kowalski"));
  });
  await browser.keys(["ArrowDown"]);
  await browser.keys(["Enter"]);
  await waitText("record-title", "Kowalski");
  await shot("08-contact-by-keyboard");
  await browser.keys(["Escape"]);
  await el("list-contact").waitForDisplayed();
  // ? lists the shortcuts; Esc closes the list and nothing else (the list stays).
  await browser.keys(["?"]);
  await el("shortcuts").waitForDisplayed({ timeout: 5000 });
  assert.match(await el("shortcuts").getText(), /Ctrl\s*\+\s*K[\s\S]*Ask a question/);
  await shot("08b-shortcuts");
  await browser.keys(["Escape"]);
  await el("shortcuts").waitForDisplayed({ reverse: true, timeout: 5000 });
  await el("list-contact").waitForDisplayed();
});

test("CSV import previews the mapping and per-row errors, then imports", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "countersign-e2e-")), "notes.csv");
  writeFileSync(file, "account,title,body\nacc_0001,Call notes,Went well\nacc_0001,,No title\nacc_0002,Follow-up,Send deck\n");
  await el("nav-note").click();
  await el("import-open").click();
  await el("import-file").setValue(file);
  await waitText("import-preview", "3 row(s): 2 ready, 1 with errors");
  assert.match(await el("import-dialog").getText(), /Line 3 · Title: Title is required/);
  assert.equal(await el("import-run").isEnabled(), false, "nothing imports while a row fails");
  await shot("09-import-preview");
  await browser.$('[data-testid="import-dialog"] input[type="checkbox"]').click();
  await browser.waitUntil(async () => el("import-run").isEnabled());
  await el("import-run").click();
  await waitText("import-result", "Imported 2 record(s).");
  await browser.$("button=Done").click();
  await el("list-search").setValue("Follow-up");
  await browser.waitUntil(async () => (await rowTexts()).length === 1);
});

test("the window may call only Countersign's own commands", async () => {
  const call = (cmd, args) =>
    browser.executeAsync(
      (cmd, args, done) => window.__TAURI_INTERNALS__.invoke(cmd, args).then(() => done("allowed"), (e) => done(`refused: ${e}`)),
      cmd,
      args,
    );
  assert.equal(await call("app_state", {}), "allowed");
  // A core command that exists but is not granted by src-tauri/capabilities/default.json.
  assert.match(await call("plugin:window|set_title", { label: "main", value: "pwned" }), /^refused: .*not allowed/);
  // A plugin that is not part of the app at all.
  assert.match(await call("plugin:fs|read_text_file", { path: "/etc/passwd" }), /^refused/);
});

test("related lists and the invoice list", async () => {
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  await el("nav-invoice").click();
  // Column filters run in the kernel: a picklist filter and a parent-name filter together.
  await el("filter-status").selectByAttribute("value", "overdue");
  await el("filter-account.name").setValue("Acme Industries");
  await browser.waitUntil(async () => {
    const texts = await rowTexts();
    return texts.length > 0 && texts.every((t) => t.includes("Overdue") && t.includes("Acme Industries"));
  });
  assert.deepEqual(
    (await browser.execute(() => [...document.querySelectorAll('[role="row"][data-index]')].map((r) => r.dataset.testid))).sort(),
    ["row-inv_0086", "row-inv_0169"],
  );
  await shot("10-invoices-filtered");
  await el("filter-status").selectByAttribute("value", "");
  await el("filter-account.name").clearValue();
  await searchList("INV-2025-00001");
  await shot("11-invoices-search");
  await el("row-inv_0001").click();
  await el("tab-related").click();
  await el("related-invoice_line").waitForDisplayed();
  assert.match(await el("related-invoice_line").getText(), /Standard subscription/);
  await shot("12-invoice-related-lines");
});

test("settings: discover the local model, store its key in the keyring, test it, pin it", async () => {
  // Settings has a section per page; its search box finds a setting by name and Enter opens
  // its section.
  await el("nav-settings").click();
  await el("settings-page-general").waitForExist({ timeout: 15000 });
  await el("settings-search").setValue("learned");
  await el("settings-found").waitForDisplayed();
  assert.match(await el("settings-found").getText(), /Learned from corrections — AI studio/);
  await browser.keys("Enter");
  await el("settings-page-studio").waitForExist({ timeout: 10000 });
  assert.equal(await browser.execute(() => location.hash), "#settings/studio", "the section's route is the window's URL");
  await shot("13a-settings-search");
  // Cara (no ai.manage) sees the configuration read-only.
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  await openSettings(browser, "model");
  await el("settings").waitForDisplayed();
  assert.match(await el("settings").getText(), /needs the ai.manage permission/);
  assert.equal(await el("discover").isExisting(), false);
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await el("discover").waitForDisplayed();
  await el("discover").click();
  await el("discovered").waitForDisplayed({ timeout: 15000 });
  assert.match(await el("discovered").getText(), /llama\.cpp at http:\/\/127\.0\.0\.1:8080\/v1/);
  await el("discovered").click();
  const apiKey = `sk-e2e-${process.pid}-canary`;
  await el("provider-keyref").setValue("secret://countersign/e2e-llama");
  await el("provider-secret").setValue(apiKey);
  await el("provider-save").click();
  await el("provider-llama-cpp").waitForDisplayed();
  await el("test-llama-cpp").click();
  await el("report-llama-cpp").waitForDisplayed({ timeout: 15000 });
  assert.match(await el("report-llama-cpp").getText(), /llama\.cpp · \d+ ms · models: local-model/);
  await el("pin-key").setValue("ask-default");
  await el("pin-save").click();
  await el("pin-ask-default").waitForDisplayed({ timeout: 15000 });
  assert.match(await el("pin-ask-default").getText(), /meta-sha256:/);
  assert.equal(await el("pin-status-ask-default").getText(), "matches");
  await shot("13-settings-providers");
  // A floating name is refused.
  await el("pin-model").setValue("latest");
  await el("pin-save").click();
  await waitText("settings-error", "floating name");
  // The key went to the keyring, not into the workspace file.
  for (const suffix of ["", "-wal"]) {
    try {
      assert.ok(!readFileSync(process.env.COUNTERSIGN_WORKSPACE + suffix).includes(apiKey), `key found in workspace${suffix}`);
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
    }
  }
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
});

test("ask: progress, an editable spec over a real table, save as a list view, refusals", async () => {
  // The model pinned in the settings test (the real local 0.5B model) answers for ava.
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await el("nav-account").click();
  await el("list-search").waitForDisplayed();
  // Ctrl+K goes to the Ask bar.
  // (WebKitWebDriver's key actions do not deliver a Ctrl chord to the page, so the chord is
  // dispatched as the keydown the window listens for.)
  await browser.execute(() =>
    window.dispatchEvent(new KeyboardEvent("keydown", { key: "k", code: "KeyK", ctrlKey: true, bubbles: true })),
  );
  await browser.waitUntil(async () => (await browser.execute(() => document.activeElement?.dataset.testid)) === "ask-bar");
  // (A question whose reading leaves nothing to choose is answered by the kernel at once,
  // without the model: the progress of a model call is shown below, where a word is read
  // two ways.)
  await el("ask-bar").setValue("Which accounts are in the healthcare industry?");
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()), {
    timeout: 180000,
    timeoutMsg: "Ask never answered",
  });
  assert.ok(await el("ask-result").isExisting(), await el("ask-panel").getText());
  const resultIds = () =>
    browser.execute(() => document.querySelectorAll('[data-testid="ask-result"] tbody tr').length);
  const csv = readFileSync(new URL("../../fixtures/demo/data/account.csv", import.meta.url), "utf8").trim().split("\n");
  const industry = csv[0].split(",").indexOf("industry");
  const healthcare = csv.slice(1).filter((l) => l.split(",")[industry] === "healthcare").length;
  assert.equal(await resultIds(), healthcare);
  assert.match(await el("ask-spec").getText(), /Industry = Healthcare/);
  await shot("15-ask-answer");
  await a11y("Ask answer");
  // Saved as a list view, it filters the Accounts list the same way.
  await el("ask-view-name").setValue("Healthcare accounts");
  await el("ask-save-view").click();
  await waitText("notice", "Healthcare accounts");
  // Editing the spec re-runs it in the kernel: without the filter there are more rows.
  await browser.$('[data-testid="ask-chip-industry"] .x').click();
  await el("ask-rerun").click();
  await browser.waitUntil(async () => (await resultIds()) > healthcare, { timeoutMsg: "re-run did not widen the result" });
  // The corrected spec is kept (run, then saved) and offered to the next similar question.
  await el("ask-learned-notice").waitForDisplayed({ timeout: 10000 });
  await el("ask-view-name").setValue("All accounts");
  await el("ask-save-view").click();
  await waitText("notice", "All accounts");
  await el("ask-bar").setValue("Which accounts are in the healthcare industry?");
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()), {
    timeout: 180000,
    timeoutMsg: "Ask never answered the similar question",
  });
  assert.ok(await el("ask-result").isExisting(), await el("ask-panel").getText());
  await waitText("ask-learned", "Which accounts are in the healthcare industry?");
  await shot("15b-ask-learned");
  // Settings lists what was learned; deleting it means it is no longer offered.
  await openSettings(browser, "studio");
  await el("learned-row").waitForDisplayed({ timeout: 10000 });
  assert.equal((await browser.$$('[data-testid="learned-row"]')).length, 1);
  assert.match(await el("learned-row").getText(), /healthcare industry/);
  await el("learned-delete").click();
  await el("learned-empty").waitForDisplayed({ timeout: 10000 });
  await el("nav-account").click();
  await el("list-views").waitForDisplayed();
  await el("list-views").selectByAttribute("value", "Healthcare accounts");
  await browser.waitUntil(async () => (await rowTexts()).length === healthcare, { timeoutMsg: "the saved view did not filter" });
  // Ben cannot read margins: the question is refused with its reason, before any model call.
  await el("user-switcher").selectByAttribute("value", "ben");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ben");
  await el("ask-bar").setValue("Which opportunities have a margin above 40 percent?");
  await browser.keys("Enter");
  await el("ask-refusal").waitForDisplayed({ timeout: 10000 });
  assert.equal(await el("ask-refusal").getAttribute("data-code"), "grounding.insufficient");
  assert.match(await el("ask-refusal").getText(), /margin/);
  await shot("16-ask-refusal");
  // Dan has no ai.use.
  await el("user-switcher").selectByAttribute("value", "dan");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "dan");
  await el("ask-bar").setValue("Show all accounts.");
  await browser.keys("Enter");
  await el("ask-refusal").waitForDisplayed({ timeout: 10000 });
  assert.equal(await el("ask-refusal").getAttribute("data-code"), "permission");
  // A model call shows its progress, and Cancel stops it in flight ("engineers" is a title
  // and a department: the model chooses).
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await el("ask-bar").setValue("Contacts who are engineers");
  await browser.keys("Enter");
  await el("ask-progress").waitForDisplayed();
  await shot("14-ask-progress");
  await el("ask-cancel").waitForDisplayed();
  await el("ask-cancel").click();
  await el("ask-refusal").waitForDisplayed({ timeout: 15000 });
  assert.equal(await el("ask-refusal").getAttribute("data-code"), "cancelled");
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
});

test("ask: a word read two ways is swapped on its chip, a word not placed is asked back and its option runs, a not question is a ≠ chip, amounts in their record's currency", async () => {
  const answered = async (what) => {
    await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()), {
      timeout: 180000,
      timeoutMsg: `Ask never answered ${what}`,
    });
    assert.ok(await el("ask-result").isExisting(), await el("ask-panel").getText());
  };
  const rows = () => browser.execute(() => document.querySelectorAll('[data-testid="ask-result"] tbody tr').length);
  const cells = () =>
    browser.execute(() => [...document.querySelectorAll('[data-testid="ask-result"] tbody td')].map((td) => td.textContent));
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  // "engineers" is a department and a job title: the answer uses one, its chip offers the other.
  await el("ask-bar").setValue("Contacts who are engineers");
  await browser.keys("Enter");
  await answered("the engineers");
  const before = { rows: await rows(), spec: await el("ask-spec").getText() };
  await el("ask-chip-swap").waitForDisplayed({ timeout: 10000 });
  await el("ask-chip-swap").click();
  await browser.waitUntil(async () => (await el("ask-spec").getText()) !== before.spec && (await rows()) !== before.rows, {
    timeoutMsg: "the swap did not change the table",
  });
  await shot("15c-ask-swap");
  // A word nothing in the workspace holds is asked back, never answered with a table that
  // ignores it: the clarification names it, and one click on an option runs that option.
  await el("ask-bar").setValue("Contacts in sales at Zorblaxco");
  await browser.keys("Enter");
  await browser.waitUntil(
    async () => (await el("ask-clarification").isExisting()) || (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()),
    { timeout: 180000, timeoutMsg: "Ask never answered the contacts at Zorblaxco" },
  );
  assert.ok(await el("ask-clarification").isExisting(), await el("ask-panel").getText());
  assert.ok(!(await el("ask-result").isExisting()), "a table was shown as the answer");
  assert.match(await el("ask-clarification").getText(), /Zorblaxco/);
  await shot("15c2-ask-clarification");
  const labels = await browser.$$('[data-testid="ask-clarify-option"]').map((o) => o.getText());
  const leave = labels.findIndex((t) => /Leave out/.test(t));
  assert.ok(leave >= 0, `no option leaves the word out: ${labels.join(" | ")}`);
  const options = await browser.$$('[data-testid="ask-clarify-option"]');
  await options[leave].click();
  await answered("the chosen option");
  assert.ok((await rows()) > 0, "the option ran no query");
  assert.ok(!(await el("ask-clarification").isExisting()), "the clarification stayed after its option ran");
  // A "not" question is answered with the negation, shown as a "≠" chip, never the positive.
  await el("ask-bar").setValue("Accounts that are not in Lyon");
  await browser.keys("Enter");
  await answered("the accounts not in Lyon");
  const notChip = await el("ask-chip-billing_city").getText();
  assert.match(notChip, /≠\s*Lyon/, notChip);
  const accounts = readFileSync(new URL("../../fixtures/demo/data/account.csv", import.meta.url), "utf8").trim().split("\n");
  const city = accounts[0].split(",").indexOf("billing_city");
  const notLyon = accounts.slice(1).filter((l) => l.split(",")[city] !== "Lyon").length;
  assert.equal(await rows(), notLyon);
  await shot("15c3-ask-not");
  // Totals in euros are shown in euros: in the Ask table and in the invoice list.
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  await el("ask-bar").setValue("Unpaid invoices in euros with a total over 10k");
  await browser.keys("Enter");
  await answered("the euro invoices");
  const shown = await cells();
  assert.ok(shown.some((t) => t.includes("€")), shown.slice(0, 12).join(" | "));
  assert.ok(!shown.some((t) => t.includes("$")), "a euro total shown in dollars");
  await shot("15d-ask-euros");
  // The invoice lines list: each amount in its invoice's currency (a line states none itself).
  await el("nav-invoice_line").click();
  await browser.waitUntil(
    async () => {
      const texts = await rowTexts();
      return texts.some((t) => t.includes("€")) && texts.some((t) => t.includes("$"));
    },
    { timeoutMsg: "the invoice lines do not show euro and dollar amounts each in its invoice's currency" },
  );
  // A line's unit price and amount are in the same currency, its invoice's.
  const mixed = (await rowTexts()).filter((t) => t.includes("€") && t.includes("$"));
  assert.deepEqual(mixed, [], "a line shows two currencies");
  await shot("15e-lines-in-their-invoices-currency");
});

test("vocabulary: the demo's terms are listed, an admin adds one, a sales rep only reads them", async () => {
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await openSettings(browser, "objects");
  await el("vocab-object-opportunity").waitForDisplayed({ timeout: 10000 });
  const termRows = () => browser.$('[data-testid="vocab-object-opportunity"]').$$('[data-testid="vocab-term"]');
  const before = (await termRows()).length;
  assert.ok(before >= 3, "the demo has opportunity terms");
  assert.match(await el("vocab-object-opportunity").getText(), /Open opportunity/);
  await el("vocab-edit-opportunity").click();
  await el("vocab-add-term").click();
  const drafts = await browser.$$('[data-testid="vocab-object-opportunity"] fieldset');
  const last = drafts[drafts.length - 1];
  const inputs = await last.$$("input");
  await inputs[0].setValue("whale_deal");
  await inputs[1].setValue("Whale deal");
  await inputs[2].setValue("whale, huge deal");
  await last.$("select").selectByAttribute("value", "condition");
  await last.$("textarea").setValue('{"field": "amount", "op": "gte", "value": 250000}');
  await el("vocab-save").click();
  await browser.waitUntil(async () => (await termRows()).length === before + 1, { timeoutMsg: "the new term was not saved" });
  await shot("17-vocabulary");
  // ben reads the vocabulary but cannot edit it.
  await el("user-switcher").selectByAttribute("value", "ben");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ben");
  await openSettings(browser, "objects");
  await el("vocab-object-opportunity").waitForDisplayed({ timeout: 10000 });
  assert.equal(await el("vocab-edit-opportunity").isExisting(), false);
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
});

/** Drop a file on the Extract screen, as the OS would (a DragEvent carrying the file): text, or
 * bytes (a Buffer) with their MIME type. */
async function dropFile(name, content, type = "text/plain") {
  const b64 = Buffer.from(content).toString("base64");
  await browser.execute(
    (name, b64, type) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], name, { type }));
      document
        .querySelector('[data-testid="extract-drop"]')
        .dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    name,
    b64,
    type,
  );
  await waitText("extract-file", name);
}

async function extractAndReview() {
  await el("extract-run").click();
  await browser.waitUntil(async () => (await el("proposal-review").isExisting()) || (await el("extract-error").isExisting()), {
    timeout: 180000,
    timeoutMsg: "Extract never answered",
  });
  if (!(await el("proposal-review").isExisting())) assert.fail(await el("extract-panel").getText());
  await el("review-fields").waitForDisplayed({ timeout: 10000 });
}

test("mcp: off until an admin turns it on, a tool switched off, the setup names this workspace and user", async () => {
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await openSettings(browser, "mcp");
  await el("mcp-enabled").waitForExist({ timeout: 10000 });
  await el("mcp-enabled").scrollIntoView();
  assert.equal(await el("mcp-enabled").isSelected(), false, "off by default");
  assert.match(await el("mcp-tool-query_records").getText(), /the server is off/);
  await el("mcp-enabled").click();
  await browser.waitUntil(async () => /yes$/.test(await el("mcp-tool-query_records").getText()), { timeoutMsg: "not served once on" });
  await el("mcp-tool-propose_record").$("input").click();
  await browser.waitUntil(async () => /switched off/.test(await el("mcp-tool-propose_record").getText()), { timeoutMsg: "the tool stayed on" });
  const command = await el("mcp-command").getText();
  assert.ok(command.includes(process.env.COUNTERSIGN_WORKSPACE) && command.endsWith("--as ava"), command);
  assert.match(command, /countersign-cli mcp --workspace/);
  assert.match(await el("mcp-config").getText(), /"mcpServers"/);
  await shot("35-mcp-settings");
  // Ben sees what is served, and cannot change it.
  await el("user-switcher").selectByAttribute("value", "ben");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ben");
  await openSettings(browser, "mcp");
  await el("mcp-enabled").waitForExist({ timeout: 10000 });
  assert.equal(await el("mcp-enabled").isEnabled(), false);
  assert.ok((await el("mcp-command").getText()).endsWith("--as ben"));
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
});

test("extract: into a record, accept the chosen field, undo from history; a new record with the reviewer's values, undo from the proposal", async () => {
  // Cara (ai.approve) extracts with the local model pinned in the settings test.
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  await el("nav-invoice").click();
  await el("list-search").waitForDisplayed();
  await searchList("INV-2025-00001");
  await el("row-inv_0001").click();
  await waitText("value-po_number", "PO-28506");
  await el("extract-into").click();
  await el("extract-panel").waitForDisplayed();
  await dropFile("po.txt", "Re: invoice INV-2026-50001\n\nPlease note our purchase order number for this invoice: PO-E2E-4711.\n");
  await extractAndReview();
  await shot("17-review-update");
  await a11y("extract review");
  const fields = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="review-field"]')].map((r) => r.dataset.field),
  );
  assert.ok(fields.includes("po_number"), `fields proposed: ${fields}`);
  // Before → after, and the value's source span highlighted in the document preview.
  const row = browser.$('[data-testid="review-field"][data-field="po_number"]');
  assert.match(await row.getText(), /PO-28506[\s\S]*PO-E2E-4711/);
  await el("review-locate-po_number").click();
  assert.equal(await el("review-highlight").getText(), "PO-E2E-4711");
  // Nothing is written yet.
  assert.equal(await el("open-proposals").getText(), "1");
  // Accept only the PO number.
  for (const f of fields) {
    const box = el(`review-choose-${f}`);
    if ((await box.isSelected()) !== (f === "po_number")) await box.click();
  }
  await waitText("review-accept-selected", "Accept selected (1)");
  await el("review-accept-selected").click();
  await waitText("review-state", "accepted");
  await el("review-open-record").click();
  await waitText("value-po_number", "PO-E2E-4711");
  assert.doesNotMatch(await el("value-number").getText(), /INV-2026-50001/, "a field not chosen is not written");
  // Undo from the record's history.
  await el("tab-history").click();
  await el("history-undo").waitForDisplayed();
  await shot("18-history-undo");
  await el("history-undo").click();
  await waitText("history-notice", "Undone");
  await el("tab-details").click();
  await waitText("value-po_number", "PO-28506");

  // A new invoice from a demo document; the reviewer fills in what the document does not state.
  await el("nav-extract").click();
  await el("extract-panel").waitForDisplayed();
  const doc = readFileSync(new URL("../../fixtures/demo/documents/INV-2026-50946.txt", import.meta.url), "utf8");
  await dropFile("INV-2026-50946.txt", doc);
  await el("extract-object").selectByAttribute("value", "invoice");
  await extractAndReview();
  const fill = {
    number: "INV-2026-50946",
    issue_date: "2026-07-03",
    due_date: "2026-07-17",
    total: "18000",
    currency_code: "EUR",
    status: "sent",
  };
  const missing = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="review-missing"] tr')].map((r) => r.dataset.field),
  );
  for (const f of missing) {
    if (f === "account") {
      await el("review-pick-account-find").setValue("Massive");
      await browser.$('button=Find').click();
      await el("review-pick-account-choice").waitForDisplayed();
      await el("review-pick-account-choice").click();
    } else {
      assert.ok(fill[f], `no value for the missing field ${f}`);
      await el(`review-input-${f}`).setValue(fill[f]);
    }
  }
  // The invoice's two lines come with it, each read from its row of the document.
  await el("proposal-lines").waitForDisplayed();
  assert.match(await el("proposal-line-0").getText(), /Gateway appliance[\s\S]*HW-GW/);
  assert.match(await el("proposal-line-1").getText(), /Pro subscription[\s\S]*SUB-PRO/);
  // Every row is chosen by default and accepted with the invoice.
  assert.ok(await el("proposal-line-check-0").isSelected(), "every row is chosen by default");
  assert.ok(await el("proposal-line-check-1").isSelected(), "every row is chosen by default");
  await waitText("review-accept-selected", "2 of 2 rows");
  await shot("19-review-create");
  await el("review-accept-selected").scrollIntoView();
  await el("review-accept-selected").click();
  await waitText("review-state", "accepted");
  assert.match(await el("review-notice").getText(), /Accepted/);
  await el("proposal-line-record-1").waitForDisplayed();
  // Undoing a create deletes the record: cara may not delete invoices, ava may. In the inbox
  // under Accepted, undone from the proposal.
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await el("nav-proposals").click();
  await el("proposals-state-accepted").click();
  await browser.waitUntil(async () => Number(await el("proposals-count-accepted").getText()) >= 1);
  await shot("20-proposals-inbox");
  const first = await browser.execute(() => document.querySelector('[data-testid="proposal-row"]')?.dataset.id);
  const target = browser.$(`[data-testid="proposal-row"][data-id="${first}"] [data-testid="proposal-open"]`);
  await target.scrollIntoView();
  await target.click();
  await el("review-undo").waitForDisplayed();
  await el("review-undo").click();
  await waitText("review-state", "undone");
  await shot("21-review-undone");
  // The auto-apply allowlist: a reviewer sees Extract's autonomy and sets the fields.
  await el("nav-proposals").click();
  await browser.$('[data-testid="auto-apply"] summary').click();
  await el("auto-apply-object").selectByAttribute("value", "invoice");
  await waitText("auto-apply-autonomy", "propose");
  await el("auto-apply-po_number").click();
  await el("auto-apply-save").click();
  await waitText("auto-apply-notice", "1 field(s) may be applied without review");
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
});

test("extract: a photo of an invoice is read by OCR; each value says so where it came from; accepted with its lines", async () => {
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  await el("nav-extract").click();
  await el("extract-panel").waitForDisplayed();
  // A page photographed 2° askew on a grey ground (eval/make_extract_scans.py), as bytes.
  const photo = readFileSync(new URL("../../eval/extract-scans/INV-2025-00236.png", import.meta.url));
  await dropFile("INV-2025-00236.png", photo, "image/png");
  await el("extract-object").selectByAttribute("value", "invoice");
  await extractAndReview();
  // Every value found says it was read by OCR, with its page and line.
  const sources = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid^="review-locate-"]')].map((b) => b.textContent.trim()),
  );
  assert.ok(sources.length > 0, "values were read from the picture");
  for (const s of sources) assert.match(s, /page 1, line \d+, read by OCR/);
  // The lines of the photographed table come with it.
  await el("proposal-lines").waitForDisplayed();
  assert.match(await el("proposal-line-0").getText(), /Gateway appliance[\s\S]*HW-GW/);
  await shot("19b-review-ocr");
  // The photographed invoice is one of the demo's: its number is taken, so the reviewer gives
  // the new record a number of its own.
  await el("review-edit-number").click();
  await el("review-input-number").setValue("INV-2026-OCR-0001");
  await browser.keys("Enter");
  await el("review-edited").waitForDisplayed();
  const fill = { number: "INV-2025-00236", issue_date: "2025-05-22", due_date: "2025-06-21", total: "73400", currency_code: "USD", status: "sent" };
  const missing = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="review-missing"] tr')].map((r) => r.dataset.field),
  );
  for (const f of missing) {
    if (f === "account") {
      await el("review-pick-account-find").setValue("Orbit Holdings");
      await browser.$("button=Find").click();
      await el("review-pick-account-choice").waitForDisplayed();
      await el("review-pick-account-choice").click();
    } else {
      assert.ok(fill[f], `no value for the missing field ${f}`);
      await el(`review-input-${f}`).setValue(fill[f]);
    }
  }
  await el("review-accept-selected").scrollIntoView();
  await el("review-accept-selected").click();
  await waitText("review-state", "accepted");
  assert.match(await el("review-notice").getText(), /Accepted/);
});

test("tool approvals: a sales rep's call of a tool from outside waits in the inbox with every argument; approved, its target gets one request with the operation key; Settings → Tools refuses its calls and writes an HTTP tool", async () => {
  // A target on this machine that records each request.
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      requests.push({ key: req.headers["idempotency-key"], path: req.url, body: JSON.parse(body || "null") });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ticket: "T-42" }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  const cli = (...args) => execFileSync(process.env.CLI_BIN, ["--workspace", process.env.COUNTERSIGN_WORKSPACE, ...args], { encoding: "utf8" });
  const inputs = JSON.stringify({ type: "object", properties: { title: { type: "string" }, details: { type: "string" } }, required: ["title"], additionalProperties: false });
  cli("--as", "ava", "tool", "add-http", "open_ticket", "--description", "Open a support ticket.", "--effect", "changes_outside",
    "--url", `${url}/tickets`, "--inputs", inputs, "--body", '{"subject":"{title}","text":"{details}"}', "--policy", "ask", "--capability", "cli", "--deduplicates");
  const details = "Line one of a long description that must be shown in full.\n".repeat(12) + "THE LAST LINE";
  const asked = JSON.parse(cli("--as", "ben", "tool", "call", "open_ticket", "--run", "e2e", "--input",
    JSON.stringify({ title: "Printer on fire", details, _rationale: "The customer called twice." })));
  assert.equal(asked.state, "waiting");
  try {
    await el("user-switcher").selectByAttribute("value", "ava");
    await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
    await el("nav-proposals").click();
    await el("tool-approval").waitForDisplayed({ timeout: 10000 });
    const shown = await el("tool-approval").getText();
    assert.match(shown, /open_ticket/);
    assert.match(shown, /changes something outside/);
    assert.match(shown, /asked by ben/);
    assert.match(shown, /The customer called twice\./);
    const args = await el("tool-approval-arguments").getText();
    assert.ok(args.includes("Printer on fire") && args.includes("THE LAST LINE"), "every argument is shown in full");
    await shot("22-tool-approval");
    assert.equal(requests.length, 0, "nothing is sent before the approval");
    await el("tool-approve").click();
    await waitText("tool-decided", "open_ticket: approved and done.");
    assert.equal(requests.length, 1);
    assert.equal(requests[0].key, "e2e:1:open_ticket");
    assert.deepEqual(requests[0].body, { subject: "Printer on fire", text: details });
    await shot("23-tool-approved");
    // Settings → Tools lists it beside the kernel's own; refusing its calls is its next version.
    await openSettings(browser, "tools");
    const row = browser.$('[data-testid="tool-row"][data-name="open_ticket"]');
    await row.waitForDisplayed({ timeout: 10000 });
    assert.match(await row.getText(), /changes something outside/);
    await row.scrollIntoView();
    await row.$('[data-testid="tool-policy"]').selectByAttribute("value", "block");
    await waitText("tools-notice", "open_ticket: saved as version 2.");
    assert.ok(await browser.$('[data-testid="tool-row"][data-name="read_record"]').isExisting());
    await shot("24-settings-tools");
    // An HTTP tool written in the app: plain http off this machine is refused where it is;
    // saved, it is listed and refused until allowed.
    await browser.$('[data-testid="http-tool"] summary').scrollIntoView();
    await browser.$('[data-testid="http-tool"] summary').click();
    await el("http-tool-name").setValue("notify_team");
    await el("http-tool-description").setValue("Post a message to the team's channel.");
    await el("http-tool-url").setValue("http://chat.example.com/hooks/team");
    await el("http-tool-add-input").click();
    await browser.$('[data-testid="http-tool-input"] input[aria-label="Input name"]').setValue("message");
    await el("http-tool-body").setValue('{"text": "{message}"}');
    await el("http-tool-save").click();
    await waitText("http-tool-error", "http on this machine only");
    await el("http-tool-url").setValue(`${url}/hooks/team`);
    await el("http-tool-save").click();
    await waitText("tools-notice", "notify_team: saved as version 1");
    const written = browser.$('[data-testid="tool-row"][data-name="notify_team"]');
    await written.waitForDisplayed({ timeout: 10000 });
    assert.match(await written.getText(), /http/);
    assert.equal(await written.$('[data-testid="tool-policy"]').getValue(), "block");
  } finally {
    server.close();
    await el("user-switcher").selectByAttribute("value", "cara");
    await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  }
});

test("summarize: the draft streams, the checked summary links each value to its field, cancel stops it", async () => {
  // Ben (sales rep) may not read the credit limit or the tax id: they are never cited. (A
  // sentence the checker refuses is shown as the kernel's clause, so a summary is refused whole
  // only when the model points at no value at all; this test is about the summary's screen, so
  // it takes the first of these accounts whose summary is verified, and says which it refused.)
  await el("user-switcher").selectByAttribute("value", "ben");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ben");
  const candidates = [
    ["Aperture Holdings", "acc_0016"],
    ["Prestige Systems", "acc_0025"],
    ["Bluth Partners", "acc_0040"],
  ];
  let account = null;
  let draft = "";
  const refusals = [];
  for (const [name, id] of candidates) {
    await openAccount(name, id);
    await el("summarize").click();
    await el("summary-panel").waitForDisplayed();
    // The model's text shows as an unchecked draft while it streams.
    draft = "";
    await browser.waitUntil(
      async () => {
        if (!draft && (await el("summary-draft").isExisting())) draft = await el("summary-draft").getText();
        return (await el("summary-verified").isExisting()) || (await el("summary-error").isExisting());
      },
      { timeout: 240000, interval: 100, timeoutMsg: "the summary never finished" },
    );
    if (await el("summary-verified").isExisting()) {
      account = { name, id };
      break;
    }
    refusals.push(`${name}: ${await el("summary-error").getAttribute("data-code")} ${await el("summary-error").getText()}`);
  }
  if (refusals.length) console.log(`summaries refused before one was verified:\n${refusals.join("\n")}`);
  if (!account) assert.fail(`every summary was refused: ${refusals.join(" | ")}`);
  assert.ok(draft.length > 0, "no draft was shown while the model wrote");
  await shot("22-summary-verified");
  await a11y("summary");
  const citations = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="summary-citation"]')].map((c) => ({ ...c.dataset })),
  );
  assert.ok(citations.length > 0, "a verified summary cites something");
  assert.ok(citations.every((c) => c.field !== "credit_limit" && c.field !== "tax_id"), JSON.stringify(citations));
  // The model chooses what it says: a field of this account, a rollup over its related lists
  // ("number of open opportunities"), or both. A rollup names this account too, but opens its set.
  const mine = (c) => !c.set && c.object === "account" && c.id === account.id;
  const own = citations.findIndex((c) => mine(c) && c.field !== "name");
  const target = own >= 0 ? own : citations.findIndex(mine);
  const rollup = citations.findIndex((c) => c.set);
  assert.ok(target >= 0 || rollup >= 0, `the summary cites neither a field of this account nor a rollup: ${JSON.stringify(citations)}`);
  // A citation of this record's field scrolls to it and highlights it.
  if (target >= 0) {
    const field = citations[target].field;
    await (await browser.$$(tid("summary-citation")))[target].click();
    await browser.waitUntil(async () => (await el(`field-${field}`).getAttribute("class")).includes("highlight"), {
      timeoutMsg: `${field} was not highlighted`,
    });
    await shot("23-summary-citation-highlight");
  }
  // A rollup's citation opens the list of the rows it is computed over; "Show all" drops the set.
  // (Following it leaves the summary, so a related record's citation is followed only without one.)
  if (rollup >= 0) {
    const c = citations[rollup];
    await (await browser.$$(tid("summary-citation")))[rollup].click();
    await el("list-set").waitForDisplayed();
    assert.ok((await el("list-set").getText()).includes(`of ${account.name} — from a summary`));
    assert.ok(await el(`list-${c.object}`).isExisting(), `the list of ${c.object} is open`);
    assert.equal(await el("summary-panel").isExisting(), false);
    const inSet = await listCount();
    if (c.set === "count") {
      const n = Number(c.value.replace(/\D/g, ""));
      assert.equal(inSet.n, n, `${c.value} counted, ${inSet.n} listed`);
      assert.equal(inSet.more, false);
      if (n <= 10) assert.equal((await rowTexts()).length, n);
    } else {
      assert.ok(inSet.n > 0, `a ${c.set} is computed over some rows`);
    }
    await shot("23-summary-rollup-set");
    await el("list-set-clear").click();
    await browser.waitUntil(async () => !(await el("list-set").isExisting()), { timeoutMsg: "the set was not dropped" });
    const all = await listCount();
    assert.ok(all.more || all.n >= inSet.n, `${all.n} of all, ${inSet.n} in the set`);
    await openAccount(account.name, account.id);
  } else {
    // A citation of a related record opens that record.
    const related = citations.findIndex((c) => !c.set && c.id !== account.id);
    if (related >= 0) {
      await (await browser.$$(tid("summary-citation")))[related].click();
      await waitText("record-title", citations[related].name);
      assert.equal(await el("summary-panel").isExisting(), false);
      await openAccount(account.name, account.id);
    }
  }
  // Cancel stops a summary in flight. (A second summary of the same record is fast — its
  // prompt is cached — so Cancel is pressed in the page the moment it shows, not a WebDriver
  // round trip later, when the answer may already be in.)
  await browser.execute(() => {
    document.querySelector('[data-testid="summarize"]').click();
    const press = () => {
      const cancel = document.querySelector('[data-testid="summary-cancel"]');
      if (cancel) cancel.click();
      else requestAnimationFrame(press);
    };
    press();
  });
  await el("summary-error").waitForDisplayed({ timeout: 30000 });
  assert.equal(await el("summary-error").getAttribute("data-code"), "cancelled");
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
});

test("studio: a prompt version that breaks the Ask suite is refused activation with the failing cases; the override is recorded", async () => {
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await openSettings(browser, "studio");
  await el("studio-cap-ask").waitForDisplayed({ timeout: 15000 });
  const versions = async () =>
    browser.execute(() =>
      [...document.querySelectorAll('[data-testid^="studio-version-ask-"]')].map((r) => Number(r.dataset.testid.split("-").pop())),
    );
  const active = await browser.execute(() =>
    Number(document.querySelector('[data-testid^="studio-version-ask-"].active')?.dataset.testid.split("-").pop()),
  );
  // A new version whose instructions make every answer a refusal. It is made from version 3,
  // where the model writes the plan: from version 4 on the kernel reads the question and the
  // model only chooses, so instructions alone barely move its answers.
  await el("studio-new-version-ask").scrollIntoView();
  await el("studio-new-version-ask").click();
  await browser.$('form[aria-label="New version of ask"] select').selectByAttribute("value", "3");
  await el("studio-new-instructions-ask").setValue(
    'Never answer. Whatever the question, answer exactly {"refusal": {"reason": "I do not answer questions"}}.',
  );
  await el("studio-publish-ask").click();
  await browser.waitUntil(async () => Math.max(...(await versions())) > active, { timeout: 10000 });
  const broken = Math.max(...(await versions()));
  // Its suite run, on the workspace's model, fails.
  await el("studio-run-version-ask").selectByAttribute("value", String(broken));
  await el("studio-run-ask").click();
  await el("studio-run-progress-ask").waitForDisplayed();
  await shot("22-studio-suite-running");
  await browser.waitUntil(
    async () =>
      browser.execute(
        (v) => [...document.querySelectorAll('[data-testid="studio-run-row-ask"]')].some((r) => r.dataset.outcome && r.textContent.includes(`v${v}`)),
        broken,
      ),
    { timeout: 900000, interval: 1000, timeoutMsg: "the suite run never finished" },
  );
  const outcome = await browser.execute(() => document.querySelector('[data-testid="studio-run-row-ask"]').dataset.outcome);
  assert.equal(outcome, "failed");
  // Activation is refused, listing the failing cases; nothing changed.
  await el(`studio-activate-ask-${broken}`).scrollIntoView();
  await el(`studio-activate-ask-${broken}`).click();
  await el("gate-refusal").waitForDisplayed();
  assert.match(await el("gate-refusal").getText(), /ask-dev-\d+/);
  await shot("23-studio-gate-refused");
  // ava (ai.manage) overrides with a reason; the decision is recorded and shown.
  await el("gate-override-reason").setValue("e2e: trying the refusing version on purpose");
  await el("gate-override").click();
  await browser.waitUntil(
    async () => (await browser.$$(tid("gate-decision"))).length > 0,
    { timeout: 10000, timeoutMsg: "no gate decision shown" },
  );
  const decisions = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="gate-decision"]')].map((r) => r.textContent),
  );
  assert.ok(decisions.some((d) => d.includes("e2e: trying the refusing version on purpose")), decisions.join(" | "));
  await el("gate-decisions").scrollIntoView();
  await shot("24-studio-override-recorded");
  // Back to the version that was active (no run for it on this model either: an override).
  await el(`studio-activate-ask-${active}`).scrollIntoView();
  await el(`studio-activate-ask-${active}`).click();
  await el("gate-refusal").waitForDisplayed();
  await el("gate-override-reason").setValue("e2e: back to the shipped version");
  await el("gate-override").click();
  await browser.waitUntil(
    async () =>
      browser.execute(
        (v) => document.querySelector(`[data-testid="studio-version-ask-${v}"]`)?.classList.contains("active"),
        active,
      ),
    { timeout: 10000, timeoutMsg: "the shipped version is not active again" },
  );
  // The binding's settings and the users' rights (read-only) are on the same screen.
  await el("studio-binding-ask").scrollIntoView();
  assert.ok(await el("studio-binding-ask-maxOutputTokens").isExisting());
  await shot("27-studio-binding");
  await el("studio-users").scrollIntoView();
  assert.match(await el("studio-user-ben").getText(), /Ben/);
  await shot("28-studio-users");
  // The fitness check of the pinned model: it starts on the first suite, and Cancel stops it
  // with what it has (the suite in progress stored as cancelled).
  await el("studio-fitness").scrollIntoView();
  await el("studio-fitness-run").click();
  await browser.waitUntil(async () => /PASS|FAIL/.test(await el("studio-fitness-progress").getText()), {
    timeout: 120000,
    timeoutMsg: "the fitness check judged no case",
  });
  await shot("29-studio-fitness-running");
  await el("studio-fitness-cancel").click();
  await el("studio-fitness-table").waitForDisplayed({ timeout: 60000 });
  const outcomes = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="studio-fitness-row"]')].map((r) => r.dataset.outcome),
  );
  assert.deepEqual(outcomes, ["cancelled"]);

  // The Ask suite edited: a lower floor, one case removed, one added; published as version 2.
  const suiteLine = async () => el("studio-suite-ask").getText();
  assert.match(await suiteLine(), /version 1 .* 26 cases/);
  await el("studio-suite-edit-ask").scrollIntoView();
  await el("studio-suite-edit-ask").click();
  await el("studio-suite-floor-ask").setValue("80");
  await el("studio-case-remove-ask-dev-01").click();
  await el("studio-suite-add-user-ask").selectByAttribute("value", "ava");
  await el("studio-suite-add-question-ask").setValue("Which accounts are in Lisbon?");
  await el("studio-suite-add-object-ask").setValue("account");
  await el("studio-suite-add-refusal-ask").click();
  await el("studio-suite-add-ask").click();
  await browser.$(`[data-testid^="studio-case-new-"]`).waitForDisplayed();
  await shot("30-studio-suite-edit");
  await el("studio-suite-publish-ask").click();
  await el("studio-suite-notice-ask").waitForDisplayed({ timeout: 10000 });
  await browser.waitUntil(async () => /version 2 .* floor 80\s*% .* 26 cases, \d+ hard/.test(await suiteLine()), {
    timeout: 10000,
    timeoutMsg: `the suite line did not show version 2: ${await suiteLine()}`,
  });
});

test("activity: the calls so far with filters, a call's prompt and output, spend by day", async () => {
  // ava (ai.manage) sees everyone's calls: the Ask, Extract and Summarize calls of this run.
  await el("nav-activity").click();
  await el("activity-table").waitForDisplayed({ timeout: 15000 });
  const rows = async () => (await browser.$$(tid("activity-row"))).length;
  assert.ok((await rows()) >= 5, `calls listed: ${await rows()}`);
  await el("activity-spend").waitForDisplayed();
  assert.ok(await el("activity-chart-capability").isExisting());
  assert.ok(await el("activity-chart-user").isExisting(), "ava sees spend by user");
  assert.match(await el("activity-totals").getText(), /\d/);
  await shot("25-activity");
  // Only Extract's calls; one opens its prompt, raw output and the proposal it made.
  await el("activity-filter-capability").selectByAttribute("value", "extract");
  await browser.waitUntil(
    async () =>
      browser.execute(() =>
        [...document.querySelectorAll('[data-testid="activity-row"]')].every((r) => r.textContent.includes("extract")),
      ),
    { timeout: 10000, timeoutMsg: "the capability filter did not apply" },
  );
  const firstCell = browser.$(`${tid("activity-row")} td`);
  await firstCell.scrollIntoView();
  await firstCell.click();
  await el("activity-detail").waitForDisplayed();
  await el("activity-detail").scrollIntoView();
  assert.match(await el("activity-prompt").getText(), /document/i);
  await shot("26-activity-detail");
  if (await el("activity-open-proposal").isExisting()) {
    await el("activity-open-proposal").scrollIntoView();
    await el("activity-open-proposal").click();
    await el("proposal-review").waitForDisplayed();
  }
  // Cara sees only her own calls.
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  await el("nav-activity").click();
  await el("activity-table").waitForDisplayed();
  assert.equal(await el("activity-filter-user").isExisting(), false, "no user filter for her own calls");
  assert.equal(await el("activity-chart-user").isExisting(), false);
});

test("keyboard only: open a record, summarize it, ask a question, Settings → a section, accept a proposal — every step by keys, no pointer", async () => {
  // Before the tests that open other workspaces: the CLI below writes to this run's workspace.
  // A proposal to accept, made from outside (the CLI, with the local model pinned above): an
  // e-mail's purchase order number for INV-2025-00002, as cara (ai.approve).
  const doc = join(mkdtempSync(join(tmpdir(), "countersign-e2e-")), "po.txt");
  writeFileSync(doc, "Re: invoice INV-2025-00002\n\nPlease note our purchase order number for this invoice: PO-KEYS-2207.\n");
  const made = JSON.parse(
    execFileSync(process.env.CLI_BIN, ["--workspace", process.env.COUNTERSIGN_WORKSPACE, "--as", "cara", "extract", "--object", "invoice", "--record", "inv_0002", doc], { encoding: "utf8" }),
  );
  const proposal = made.proposal.id;
  assert.equal(made.proposal.state, "open", `the extract's proposal is ${made.proposal.state}${made.proposal.autoApplied ? " (applied without review)" : ""}`);
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  await browser.execute(() => document.activeElement?.blur());
  const focused = () => browser.execute(() => document.activeElement?.getAttribute("data-testid") ?? "");
  /** Tab (forwards) until the element is focused: every action is reachable by focus. */
  async function tabTo(id, max = 150, where = "") {
    const at = () =>
      browser.execute(
        (id, where) => {
          const a = document.activeElement;
          return !!a && a.getAttribute("data-testid") === id && (!where || !!a.closest(where));
        },
        id,
        where,
      );
    for (let i = 0; i < max; i++) {
      if (await at()) return;
      await browser.keys("Tab");
    }
    assert.fail(`Tab never reached ${id}${where ? ` in ${where}` : ""} (at ${await focused()})`);
  }
  // A record: its list by Tab and Enter, the search by /, the row by ↓ and Enter.
  await tabTo("nav-account");
  await browser.keys("Enter");
  await el("list-account").waitForDisplayed();
  await browser.keys("/");
  await browser.keys("Aperture Holdings".split(""));
  await browser.waitUntil(async () => {
    const texts = await rowTexts();
    return texts.length > 0 && texts.every((t) => t.includes("Aperture Holdings"));
  });
  await browser.keys(["ArrowDown"]);
  await browser.keys(["Enter"]);
  await waitText("record-title", "Aperture Holdings");
  // Summarize it.
  await tabTo("summarize");
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await el("summary-verified").isExisting()) || (await el("summary-error").isExisting()), {
    timeout: 240000,
    timeoutMsg: "the summary never finished",
  });
  await shot("46-keyboard-summary");
  // Esc closes the summary, not the record, and focus returns to Summarize.
  await browser.keys("Escape");
  await el("summary-panel").waitForDisplayed({ reverse: true, timeout: 5000 });
  assert.equal(await focused(), "summarize");
  assert.match(await el("record-title").getText(), /Aperture Holdings/);
  // Ask a question from the Ask bar.
  await tabTo("ask-bar");
  // Typed into the focused field (WebDriver's send keys: no pointer; a run of single key
  // presses there drops spaces and doubled letters).
  await el("ask-bar").setValue("Which accounts are in the healthcare industry?");
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()), {
    timeout: 240000,
    timeoutMsg: "the question was never answered",
  });
  // Settings → Tools.
  await tabTo("nav-settings");
  await browser.keys("Enter");
  await tabTo("settings-section-tools");
  await browser.keys("Enter");
  await el("settings-page-tools").waitForExist({ timeout: 10000 });
  // The proposal: the inbox, its row, Accept selected.
  await tabTo("nav-proposals");
  await browser.keys("Enter");
  await el("proposals-inbox").waitForDisplayed({ timeout: 10000 });
  // The proposal made above, by ↓ from the list's first row (the inbox holds others from the
  // tests before; each row is one Tab stop), opened by Enter.
  await tabTo("proposal-row");
  const rowAt = () => browser.execute(() => document.activeElement?.getAttribute("data-id") ?? "");
  for (let i = 0; i < 300 && (await rowAt()) !== proposal; i++) await browser.keys("ArrowDown");
  if ((await rowAt()) !== proposal) {
    const seen = await browser.execute(() => ({
      active: document.activeElement?.outerHTML.slice(0, 300),
      rows: [...document.querySelectorAll('[data-testid="proposal-row"]')].map((r) => r.getAttribute("data-id")),
    }));
    assert.fail(`↓ never reached the proposal made above (${proposal}): ${JSON.stringify(seen)}`);
  }
  await browser.keys("Enter");
  await el("review-state").waitForDisplayed({ timeout: 10000 });
  await tabTo("review-accept-selected");
  await browser.keys("Enter");
  await waitText("review-state", "accepted", 15000);
  await shot("47-keyboard-accepted");
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
});

test("activity on a month of calls: a few hundred calls, spend by day against the budget", async () => {
  // A workspace with a month of Ask, Summarize and Extract calls made through the real pipeline
  // against a fake endpoint (scripts/e2e.sh has the kernel's test write it).
  const sample = process.env.ACTIVITY_SAMPLE;
  assert.ok(sample, "ACTIVITY_SAMPLE names the month-of-calls workspace");
  await el("workspace-menu").click();
  await el("workspace-path").setValue(sample);
  await browser.$("button=Open").click();
  await browser.waitUntil(async () => (await browser.$("footer").getText()).includes(sample));
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await el("nav-activity").click();
  await el("activity-page").waitForDisplayed({ timeout: 15000 });
  // The month the calls were made in (the kernel test's clock starts on 2026-11-29).
  const setDay = (id, day) =>
    browser.execute(
      (sel, v) => {
        const input = document.querySelector(sel);
        input.value = v;
        input.dispatchEvent(new Event("input", { bubbles: true }));
      },
      tid(id),
      day,
    );
  await setDay("activity-filter-since", "2026-11-29");
  await setDay("activity-filter-until", "2026-12-28");
  await browser.waitUntil(async () => (await browser.$$(tid("activity-row"))).length >= 200, {
    timeout: 15000,
    timeoutMsg: "the month's calls were not listed",
  });
  const totals = await el("activity-totals").getText();
  assert.match(totals, /Invocations\s+2\d\d\b/, totals);
  assert.ok(await el("activity-chart-capability").isExisting());
  assert.ok(await el("activity-chart-user").isExisting());
  await shot("31-activity-month");
  // Only ben's failed and refused calls.
  await el("activity-filter-user").selectByAttribute("value", "ben");
  await el("activity-filter-outcome").selectByAttribute("value", "failed");
  await browser.waitUntil(
    async () =>
      browser.execute(() => {
        const rows = [...document.querySelectorAll('[data-testid="activity-row"]')];
        return rows.length > 0 && rows.every((r) => r.textContent.includes("failed") && r.textContent.includes("Ben"));
      }),
    { timeout: 10000, timeoutMsg: "the user and outcome filters did not apply" },
  );
  await shot("32-activity-month-ben-failed");
});

test("workspace menu: recent workspaces, a backup taken and restored, the About box", async () => {
  await el("workspace-menu").click();
  await el("recent-workspace").waitForDisplayed({ timeout: 10000 });
  const recent = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="recent-workspace"]')].map((r) => r.dataset.path),
  );
  assert.ok(recent.includes(process.env.ACTIVITY_SAMPLE), `recent: ${recent}`);
  assert.ok(recent.some((p) => p.endsWith("e2e.countersign")), `recent: ${recent}`);
  // A backup now, then restored (the state it replaces is backed up first).
  await el("backup-now").scrollIntoView();
  await el("backup-now").click();
  await el("backup-notice").waitForDisplayed({ timeout: 15000 });
  const rows = async () => (await browser.$$(tid("backup-row"))).length;
  assert.ok((await rows()) >= 1);
  const before = await rows();
  const restore = browser.$(`${tid("backup-row")} ${tid("backup-restore")}`);
  await restore.waitForEnabled({ timeout: 10000 });
  // Restore… asks first; Cancel leaves everything as it was.
  await restore.click();
  await el("confirm-dialog").waitForDisplayed();
  assert.match(await el("confirm-dialog").getText(), /backed up first/);
  await el("confirm-cancel").click();
  assert.equal(await rows(), before);
  await restore.click();
  await el("confirm-ok").click();
  await browser.waitUntil(async () => (await rows()) === before + 1, {
    timeout: 15000,
    timeoutMsg: "the restore did not back up what it replaced",
  });
  assert.equal(await el("backup-error").isExisting(), false);
  await shot("33-workspace-menu-backups");
  // About: the version and where things are.
  await el("about-open").scrollIntoView();
  await el("about-open").click();
  await el("about-box").waitForDisplayed();
  assert.match(await el("about-version").getText(), /\d+\.\d+\.\d+/);
  assert.match(await el("about-backups").getText(), /\.backups/);
  await shot("34-about");
  await el("about-close").click();
  if ((await el("workspace-menu").getAttribute("aria-expanded")) === "true") await el("workspace-menu").click();
});

test("accessibility: each Settings section and the assistant in both themes, and no serious or critical axe-core violation on any screen audited", async () => {
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  const sections = ["general", "model", "objects", "people", "studio", "mcp", "tools"];
  for (const theme of ["light", "dark"]) {
    // The theme as a person chooses it: Settings → General.
    await openSettings(browser, "general");
    await el("theme").selectByAttribute("value", theme);
    await browser.waitUntil(async () => (await browser.execute(() => document.documentElement.getAttribute("data-theme"))) === theme);
    for (const section of sections) {
      await openSettings(browser, section);
      await shot(`50-settings-${section}-${theme}`);
    }
  }
  await openSettings(browser, "general");
  await el("theme").selectByAttribute("value", "system");
  for (const section of sections) {
    await openSettings(browser, section);
    await browser.pause(500); // the section's data loads
    await a11y(`Settings → ${section}`);
  }
  // The screens without a model (the model's screens — Ask answer, summary, extract review —
  // are audited where the tests above show them).
  await el("nav-account").click();
  await el("row-acc_0003").waitForDisplayed({ timeout: 15000 });
  await a11y("records list");
  await el("row-acc_0003").click();
  await el("record-title").waitForDisplayed({ timeout: 10000 });
  await a11y("record page");
  await el("nav-proposals").click();
  await el("proposals-inbox").waitForDisplayed({ timeout: 10000 });
  await a11y("proposals");
  await el("nav-activity").click();
  await el("activity-page").waitForDisplayed({ timeout: 15000 });
  await browser.pause(1000); // its calls load
  await a11y("activity");
  await el("nav-assistant").click();
  await el("assistant-panel").waitForDisplayed({ timeout: 10000 });
  await a11y("assistant");
  await el("nav-assistant").click();
  const report = axeFound.map((v) => `${v.screen} (${v.theme}): ${v.id} [${v.impact}] ${v.help} — ${v.nodes.join(" | ")}`);
  assert.deepEqual(report, [], `axe-core found:\n${report.join("\n")}`);
});

test("a new empty workspace opens with empty states", async () => {
  // The acting user carries over to the new workspace: cara here.
  await el("user-switcher").selectByAttribute("value", "cara");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "cara");
  const path = join(mkdtempSync(join(tmpdir(), "countersign-e2e-")), "empty.countersign");
  await el("workspace-menu").click();
  await el("workspace-path").setValue(path);
  await browser.$('[aria-label="Workspace"] input[type="checkbox"]').click();
  await browser.$("button=Create new").click();
  await browser.waitUntil(async () => (await browser.$("footer").getText()).includes(path));
  await el("nav-account").click();
  await el("list-empty").waitForDisplayed();
  assert.match(await el("list-empty").getText(), /No accounts yet/);
  await shot("14-empty-workspace");
  // Cara (finance) may not create accounts: no New button for her.
  assert.equal(await el("user-switcher").getValue(), "cara");
  assert.equal(await el("new-record").isExisting(), false);
  // Ava creates the first record through the form; required fields are checked by the kernel.
  await el("user-switcher").selectByAttribute("value", "ava");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "ava");
  await el("nav-account").click();
  await el("new-record").click();
  await el("create").click();
  await el("error-name").waitForDisplayed();
  assert.match(await el("error-name").getText(), /required/);
  await el("input-name").setValue("First Customer");
  await el("create").click();
  await waitText("record-title", "First Customer");
  await shot("15-first-record");
  // Delete asks first, then the list is empty again.
  await el("delete").click();
  await el("confirm-ok").click();
  await el("list-empty").waitForDisplayed();
});

test("your own workspace: from blank, two objects with a lookup and a picklist, a 10,000-row import, a read-only user, a question", async () => {
  // Ava (from the test before) makes a blank workspace: its one user, "me", may do everything.
  const dir = mkdtempSync(join(tmpdir(), "countersign-e2e-"));
  const path = join(dir, "lettings.countersign");
  await el("workspace-menu").click();
  await el("workspace-path").setValue(path);
  await el("workspace-template").selectByAttribute("value", "blank");
  await browser.$("button=Create new").click();
  await browser.waitUntil(async () => (await browser.$("footer").getText()).includes(path));
  await el("no-objects").waitForDisplayed();
  assert.equal(await el("user-switcher").getValue(), "me");

  // Settings → Objects: Properties (a Kind picklist), then Units looking Properties up.
  await openSettings(browser, "objects");
  await el("objects-editor").waitForDisplayed({ timeout: 15000 });
  await el("new-object-label").setValue("Property");
  await el("new-object-plural").setValue("Properties");
  await el("new-object-add").click();
  await el("object-detail").waitForDisplayed();
  await el("new-field-label").setValue("City");
  await el("new-field-add").click();
  await el("new-field-label").setValue("Kind");
  await el("new-field-type").selectByAttribute("value", "picklist");
  await el("new-field-add").click();
  const kind = '[data-testid="field-row"][data-key="kind"]';
  for (const [value, label] of [["house", "House"], ["flat", "Flat"]]) {
    await browser.$(`${kind} [data-testid="picklist-add-value"]`).click();
    const values = await browser.$$(`${kind} input[aria-label="Value"]`);
    const labels = await browser.$$(`${kind} input[aria-label="Value label"]`);
    await values[values.length - 1].setValue(value);
    await labels[labels.length - 1].setValue(label);
  }
  await el("new-object-label").setValue("Unit");
  await el("new-object-plural").setValue("Units");
  await el("new-object-add").click();
  await browser.waitUntil(async () => (await el("object-label").getValue()) === "Unit");
  await el("new-field-label").setValue("Property");
  await el("new-field-type").selectByAttribute("value", "lookup");
  await el("new-field-target").selectByAttribute("value", "property");
  await el("new-field-add").click();
  await el("new-field-label").setValue("Rent");
  await el("new-field-type").selectByAttribute("value", "currency");
  await el("new-field-add").click();
  // Deploy shows its preview first.
  await el("deploy-preview").click();
  await el("deploy-preview-panel").waitForDisplayed({ timeout: 15000 });
  const preview = await el("deploy-preview-panel").getText();
  assert.match(preview, /Adds object property/);
  assert.match(preview, /Adds object unit/);
  assert.match(preview, /Nothing in the data stands in the way/);
  await shot("40-deploy-preview");
  await el("deploy-run").click();
  await waitText("deploy-done", "Deployed generation 2", 15000);
  await el("nav-property").waitForDisplayed();

  // 10,000 properties from a CSV whose columns need a mapping; one row has no name.
  const csv = ["Name,Town,Type"];
  for (let i = 1; i <= 10000; i++) {
    const flat = i % 3 === 0;
    csv.push(`${i === 5000 ? "" : `Property ${i}`},${["Leeds", "York", "Hull"][i % 3]},${flat ? "Flat" : "House"}`);
  }
  const file = join(dir, "properties.csv");
  writeFileSync(file, csv.join("\n") + "\n");
  await el("nav-property").click();
  await el("import-open").click();
  await el("import-file").setValue(file);
  await el("import-mapping").waitForDisplayed({ timeout: 30000 });
  // Name by its meaning, Type by its values; Town is mapped by hand.
  assert.equal(await browser.$('[data-testid="import-map"][data-column="Name"]').getValue(), "name");
  assert.equal(await browser.$('[data-testid="import-map"][data-column="Type"]').getValue(), "kind");
  await browser.$('[data-testid="import-map"][data-column="Town"]').selectByAttribute("value", "city");
  await waitText("import-preview", "10000 row(s): 9999 ready, 1 with errors", 60000);
  assert.match(await el("import-dialog").getText(), /Line 5001 · Property Name: .*required/);
  await shot("41-import-preview");
  await browser.$('[data-testid="import-dialog"] input[type="checkbox"]').click();
  await browser.waitUntil(async () => el("import-run").isEnabled(), { timeout: 60000 });
  const t0 = Date.now();
  await el("import-run").click();
  await waitText("import-result", "Imported 9999 record(s).", 120000);
  // The list shows the city beside the name (the owner sees it; Rita, below, will not).
  metrics.import10kMs = Date.now() - t0;
  assert.match(await el("import-skipped").getText(), /Line 5001/);
  await shot("42-import-result");
  await browser.$("button=Done").click();
  await browser.waitUntil(async () => (await rowTexts()).some((t) => /Leeds|York|Hull/.test(t)), { timeoutMsg: "the owner's list shows no city" });

  // A read-only permission set without the city, and a user who has only it.
  await openSettings(browser, "people");
  await el("people-editor").waitForDisplayed({ timeout: 15000 });
  await el("new-set-label").setValue("Read only");
  await el("new-set-add").click();
  await el("set-detail").waitForDisplayed();
  await el("right-property-read").click();
  await el("right-unit-read").click();
  await browser.$('[data-testid="set-detail"] select:not([data-testid])').selectByAttribute("value", "property");
  await el("level-property-city").selectByAttribute("value", "none");
  await el("new-user-name").setValue("Rita Reader");
  await el("new-user-set").selectByAttribute("value", "read_only");
  await el("new-user-add").click();
  await el("deploy-preview").click();
  await el("deploy-preview-panel").waitForDisplayed({ timeout: 15000 });
  assert.match(await el("deploy-preview-panel").getText(), /Adds user rita_reader/);
  await el("deploy-run").click();
  await waitText("deploy-done", "Deployed generation 3", 15000);
  // See as Rita, then be Rita: properties without their city, nothing to create.
  await el("see-as-user").selectByAttribute("value", "rita_reader");
  await el("see-as-object").selectByAttribute("value", "property");
  await el("see-as-run").click();
  await el("see-as-result").waitForDisplayed();
  assert.doesNotMatch(await el("see-as-result").getText(), /City/);
  await shot("43-see-as");
  await el("user-switcher").selectByAttribute("value", "rita_reader");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "rita_reader");
  await el("nav-property").click();
  await el("list-search").waitForDisplayed();
  assert.ok((await listCount()).n > 0);
  assert.ok((await rowTexts()).every((t) => !/Leeds|York|Hull/.test(t)), "Rita sees no city");
  assert.equal(await el("new-record").isExisting(), false);
  await shot("44-read-only-user");

  // Back as the owner: the local model (set up for this workspace too) answers a question.
  await el("user-switcher").selectByAttribute("value", "me");
  await browser.waitUntil(async () => (await el("user-switcher").getValue()) === "me");
  await openSettings(browser, "model");
  await el("discover").waitForDisplayed({ timeout: 15000 });
  await el("discover").click();
  await el("discovered").waitForDisplayed({ timeout: 15000 });
  await el("discovered").click();
  await el("provider-save").click();
  await el("provider-llama-cpp").waitForDisplayed();
  await el("test-llama-cpp").click();
  await el("report-llama-cpp").waitForDisplayed({ timeout: 15000 });
  await el("pin-key").setValue("ask-default");
  await el("pin-save").click();
  await browser.waitUntil(async () => (await el("pin-ask-default").isExisting()) || (await el("settings-error").isExisting()), { timeout: 15000 });
  assert.ok(await el("pin-ask-default").isExisting(), await el("settings").getText());
  await el("nav-property").click();
  await el("ask-bar").setValue("Which properties are flats?");
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("ask-refusal").isExisting()), {
    timeout: 180000,
    timeoutMsg: "Ask never answered",
  });
  assert.ok(await el("ask-result").isExisting(), await el("ask-panel").getText());
  assert.match(await el("ask-spec").getText(), /Kind = Flat/);
  await shot("45-ask-own-workspace");
});
