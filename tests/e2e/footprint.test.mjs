// One cold start of an app in a real window, as scripts/footprint.sh measures it for both
// Countersign and the minimal Tauri app (the floor): the time from asking tauri-driver for a
// session to the app's first screen (READY_SELECTOR shown), and the memory of the app and its
// WebKit processes once idle. Appends one JSON line to FOOTPRINT_OUT.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { appMemory, openWindow } from "./window.mjs";

const APP = process.env.APP_BIN;
const READY = process.env.READY_SELECTOR;
const OUT = process.env.FOOTPRINT_OUT;
assert.ok(APP && READY && OUT, "APP_BIN, READY_SELECTOR and FOOTPRINT_OUT must be set");

test(`cold start and idle memory of ${APP}`, async () => {
  const t0 = Date.now();
  const browser = await openWindow(APP);
  try {
    // Polled every 10 ms (WebdriverIO polls every 100 ms by default: too coarse for a start).
    await browser.$(READY).waitForDisplayed({ timeout: 60000, interval: 10 });
    const coldStartMs = Date.now() - t0;
    await browser.pause(2000);
    const idle = appMemory(APP);
    appendFileSync(OUT, JSON.stringify({ app: APP, run: Number(process.env.FOOTPRINT_RUN ?? 0), coldStartMs, idle }) + "\n");
  } finally {
    await browser.deleteSession();
  }
});
