import { describe, expect, it } from "vitest";
import { areaHeight, MAX_PX, scrollFor, windowAt } from "./window";

describe("list window", () => {
  it("draws the rows in view with overscan, one pixel per pixel for short lists", () => {
    const w = windowAt(340, 300, 1000, 34, 2);
    expect(w.first).toBe(8);
    // Rows 10 to 18 are in view (640 / 34 = 18.8), two more either side.
    expect(w.count).toBe(21 - 8);
    expect(w.top).toBe(8 * 34);
    expect(w.height).toBe(34_000);
  });
  it("squeezes a million rows into the scroll area and still reaches the first, middle and last row", () => {
    const rows = 1_000_000;
    const viewport = 600;
    expect(areaHeight(rows, 34)).toBe(MAX_PX);
    expect(windowAt(0, viewport, rows, 34, 0).first).toBe(0);
    const bottom = MAX_PX - viewport;
    const end = windowAt(bottom, viewport, rows, 34, 0);
    expect(end.first + end.count).toBe(rows);
    // The last row's bottom is the viewport's bottom.
    expect(end.top + (end.count - 1) * 34 + 34).toBeCloseTo(bottom + viewport, 6);
    const mid = windowAt(scrollFor(500_000, 0, viewport, rows, 34, false), viewport, rows, 34, 0);
    expect(mid.first).toBe(500_000);
    expect(mid.top).toBeCloseTo(scrollFor(500_000, 0, viewport, rows, 34, false), 6);
  });
  it("scrolls only as far as needed to bring a row into view", () => {
    expect(scrollFor(3, 0, 340, 1000, 34)).toBe(0);
    expect(scrollFor(10, 0, 340, 1000, 34)).toBe(11 * 34 - 340);
    expect(scrollFor(2, 340, 340, 1000, 34)).toBe(68);
  });
});
