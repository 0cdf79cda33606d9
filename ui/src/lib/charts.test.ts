import { describe, expect, it } from "vitest";
import { config, tableRows, type BarSpec } from "./charts";

const spec = (integer: boolean): BarSpec => ({
  days: ["2026-12-01", "2026-12-02"],
  series: [
    { label: "ask", data: [1, 3] },
    { label: "summarize", data: [2] },
  ],
  lines: [],
  stacked: true,
  yTitle: integer ? "Invocations" : "Cost (EUR)",
  format: (v) => (integer ? String(v) : `${v.toFixed(2)} EUR`),
  integer,
});

describe("a chart", () => {
  it("counts whole invocations on a whole-number axis, and money on its own", () => {
    const y = (integer: boolean) => (config(spec(integer)).options?.scales?.y as { ticks: { precision?: number } }).ticks;
    expect(y(true).precision).toBe(0);
    expect(y(false).precision).toBeUndefined();
  });

  it("has a table of the same figures, a row a day and a column a series", () => {
    expect(tableRows(spec(false))).toEqual([
      { day: "2026-12-01", values: ["1.00 EUR", "2.00 EUR"] },
      { day: "2026-12-02", values: ["3.00 EUR", "0.00 EUR"] },
    ]);
  });
});
