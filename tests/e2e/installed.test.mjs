// The installed package, as a new user meets it: scripts/package-test.sh installs the .deb and
// runs this suite against /usr/bin/countersign on a fresh home directory. The first run creates
// the demo workspace, a record opens, the Ask bar is there, and a second launch hands its
// workspace file to the running window instead of starting a second instance.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { openWindow, screenshot } from "./window.mjs";

const APP = process.env.APP_BIN;
const HOME = process.env.HOME;
const SHOTS = process.env.SCREENSHOT_DIR ?? "target/installed-screenshots";
assert.ok(APP && HOME, "APP_BIN and HOME must be set");
mkdirSync(SHOTS, { recursive: true });

let browser;
const tid = (id) => `[data-testid="${id}"]`;
const el = (id) => browser.$(tid(id));
const footer = async () => browser.$("footer").getText();

before(async () => {
  browser = await openWindow(APP);
});

after(async () => {
  if (browser) await browser.deleteSession();
});

test("the first run creates the demo workspace in the user's data folder", async () => {
  await el("row-acc_0003").waitForDisplayed({ timeout: 60000 });
  const demo = join(process.env.XDG_DATA_HOME ?? join(HOME, ".local/share"), "app.countersign.desktop", "demo.countersign");
  assert.ok(existsSync(demo), `${demo} exists`);
  assert.match(await footer(), /demo\.countersign/);
  screenshot(join(SHOTS, "installed-01-first-run.png"));
});

test("a record opens and the Ask bar is there", async () => {
  await el("row-acc_0003").click();
  await el("record-title").waitForDisplayed();
  assert.ok((await el("record-title").getText()).length > 0);
  assert.ok(await el("ask-bar").isExisting(), "the Ask bar");
  screenshot(join(SHOTS, "installed-02-record.png"));
});

test("a second launch with a workspace file opens it in the running window and exits", async () => {
  // A second workspace, made in the app.
  const other = join(HOME, "Documents", "second.countersign");
  mkdirSync(join(HOME, "Documents"), { recursive: true });
  await el("workspace-menu").click();
  await el("workspace-path").setValue(other);
  await browser.$("button=Create new").click();
  await browser.waitUntil(async () => (await footer()).includes(other), { timeoutMsg: "the new workspace did not open" });
  // Back to the demo by its path.
  const demo = join(process.env.XDG_DATA_HOME ?? join(HOME, ".local/share"), "app.countersign.desktop", "demo.countersign");
  await el("workspace-menu").click();
  await el("workspace-path").setValue(demo);
  await browser.$("button=Open").click();
  await browser.waitUntil(async () => (await footer()).includes("demo.countersign"));

  // The second launch: it hands the file over and exits at once, leaving one window.
  const second = spawnSync(APP, [other], { timeout: 30000, encoding: "utf8" });
  assert.equal(second.status, 0, `the second launch exited with ${second.status}: ${second.stderr}`);
  await browser.waitUntil(async () => (await footer()).includes(other), {
    timeout: 15000,
    timeoutMsg: "the running window did not open the file the second launch was given",
  });
  screenshot(join(SHOTS, "installed-03-second-launch.png"));
});
