// The main job on first launch, as a new user meets it: a fresh home directory, no provider and
// no pin, the built-in model's file in the app's models folder (scripts/run.sh prepares it there;
// scripts/e2e.sh links it from the local-model cache) and llama-server found
// ($COUNTERSIGN_LLAMA_SERVER). Launch, type a question, "Use the built-in model", the answer —
// Settings never opened. The time from launch to the first answer is written to
// $SCREENSHOT_DIR/first-run.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openWindow, screenshot, openSettings } from "./window.mjs";

const APP = process.env.APP_BIN;
const SHOTS = process.env.SCREENSHOT_DIR ?? "target/e2e-screenshots";
const tid = (id) => `[data-testid="${id}"]`;

test("first launch: a question is answered by the built-in model, Settings never opened", async () => {
  const t0 = Date.now();
  const browser = await openWindow(APP);
  const el = (id) => browser.$(tid(id));
  // The screen as the dark theme shows it (the theme Settings → General sets), then back.
  const inDark = async (shoot) => {
    await browser.execute(() => document.documentElement.setAttribute("data-theme", "dark"));
    await browser.pause(250);
    shoot();
    await browser.execute(() => document.documentElement.removeAttribute("data-theme"));
  };
  try {
    await el("ask-bar").waitForDisplayed({ timeout: 60000 });
    const launched = Date.now() - t0;
    await el("ask-bar").setValue("Which accounts are in the healthcare industry?");
    await browser.keys("Enter");
    // No model is set up yet: the answer welcomes, says so and offers the built-in model — a
    // step to take, not a red failure.
    await el("ask-refusal").waitForDisplayed({ timeout: 30000 });
    assert.equal(await el("ask-refusal").getAttribute("data-code"), "model.not_set_up");
    assert.equal(await el("ask-refusal").getAttribute("data-tone"), "welcome");
    assert.equal(await el("ask-refusal").getAttribute("role"), "status");
    assert.doesNotMatch(await el("ask-refusal").getText(), /could not|`/);
    assert.match(await el("ask-refusal").getText(), /no model is set up for answering questions/);
    await el("use-built-in").waitForDisplayed({ timeout: 10000 });
    if (process.env.FOUND_SERVER) {
      await el("use-found-server").waitForDisplayed({ timeout: 10000 });
      const offer = await el("found-server-offer").getText();
      assert.ok(offer.includes(process.env.FOUND_SERVER), offer);
    }
    screenshot(join(SHOTS, "40-first-run-offer.png"));
    await inDark(() => screenshot(join(SHOTS, "40-first-run-offer-dark.png")));
    const clicked = Date.now() - t0;
    await el("use-built-in").click();
    await browser.waitUntil(async () => (await el("ask-result").isExisting()) || (await el("built-in-error").isExisting()), {
      timeout: 240000,
      timeoutMsg: "the built-in model never answered",
    });
    assert.ok(await el("ask-result").isExisting(), await el("ask-panel").getText());
    const answered = Date.now() - t0;
    const rows = await browser.execute(() => document.querySelectorAll('[data-testid="ask-result"] tbody tr').length);
    const csv = readFileSync(new URL("../../fixtures/demo/data/account.csv", import.meta.url), "utf8").trim().split("\n");
    const industry = csv[0].split(",").indexOf("industry");
    assert.equal(rows, csv.slice(1).filter((l) => l.split(",")[industry] === "healthcare").length);
    screenshot(join(SHOTS, "41-first-run-answer.png"));
    await inDark(() => screenshot(join(SHOTS, "41-first-run-answer-dark.png")));
    const figures = { launchToAskBarMs: launched, launchToOfferMs: clicked, launchToFirstAnswerMs: answered, turnOnToAnswerMs: answered - clicked };
    writeFileSync(join(SHOTS, "first-run.json"), JSON.stringify(figures, null, 2));
    console.log("first run", JSON.stringify(figures));
    // Afterwards Settings shows it: running, the provider `builtin` and the pin by its sha256.
    await openSettings(browser, "model");
    await el("built-in-status").waitForDisplayed({ timeout: 10000 });
    const status = await el("built-in-status").getText();
    assert.match(status, /Running qwen2\.5-coder-0\.5b/);
    if (process.env.EXPECT_SERVER) assert.ok(status.includes(process.env.EXPECT_SERVER), status);
    assert.ok(await el("provider-builtin").isExisting());
    assert.match(await el("pin-builtin").getText(), /sha256:1d9614638d18024d/);
    screenshot(join(SHOTS, "42-settings-built-in.png"));
    // This machine's threads and context: kept, and the runtime restarts with them.
    await el("built-in-context").selectByAttribute("value", "8192");
    await el("built-in-threads").selectByAttribute("value", "1");
    await el("built-in-save-run").click();
    await browser.waitUntil(async () => /Ready: qwen2\.5-coder-0\.5b/.test(await el("built-in-status").getText()), {
      timeout: 10000,
      timeoutMsg: "the runtime was not replaced by one with the new settings",
    });
    assert.equal(await el("built-in-context").getValue(), "8192");
  } finally {
    await browser.deleteSession();
  }
});
