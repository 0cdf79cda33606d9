// The window comes back at the size it was left at — even when the app did not exit cleanly:
// tauri-driver ends a session by stopping the app, as a crash or a logout would.
// scripts/e2e.sh runs this after app.test.mjs, on the same app, workspace and config folder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openWindow } from "./window.mjs";

const APP = process.env.APP_BIN;
const ready = '[data-testid="ask-bar"]';

test("the window comes back at the size it was left at", async () => {
  const first = await openWindow(APP);
  let before;
  try {
    await first.$(ready).waitForDisplayed({ timeout: 60000 });
    const { width, height } = await first.getWindowRect();
    // A size the window has not had: 90 px narrower and 70 px lower than now.
    await first.setWindowRect(null, null, width - 90, height - 70);
    await first.waitUntil(async () => (await first.getWindowRect()).width === width - 90, { timeout: 5000 });
    before = await first.getWindowRect();
    await first.pause(2000); // the app writes the size a second after the last change
  } finally {
    await first.deleteSession();
  }
  const second = await openWindow(APP);
  try {
    await second.$(ready).waitForDisplayed({ timeout: 60000 });
    const after = await second.getWindowRect();
    assert.deepEqual({ width: after.width, height: after.height }, { width: before.width, height: before.height });
  } finally {
    await second.deleteSession();
  }
});
