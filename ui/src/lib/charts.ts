// Bar charts of spend by day, drawn with Chart.js on a canvas (a Svelte action): the chart is
// rebuilt whenever its spec changes or the colour scheme flips, and destroyed with the canvas.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
  type ChartDataset,
} from "chart.js";
import type { Action } from "svelte/action";
import { THEME_CHANGED } from "./theme";

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, Legend);

export type BarSpec = {
  days: string[];
  series: { label: string; data: number[] }[];
  /** Horizontal lines (a ceiling): drawn dashed across every day. */
  lines: { label: string; value: number }[];
  /** Bars stacked (one bar a day) or side by side (one bar per series a day). */
  stacked: boolean;
  yTitle: string;
  /** Tick and tooltip text of a value. */
  format: (v: number) => string;
  /** Whole things counted (invocations): the axis steps by whole numbers, never 0.5. */
  integer: boolean;
};

/** The rows of a chart as a table (day, then each series' value), for a screen reader and for
 * anyone who wants the numbers: the same figures the bars draw. */
export function tableRows(spec: BarSpec): { day: string; values: string[] }[] {
  return spec.days.map((day, i) => ({ day, values: spec.series.map((s) => spec.format(s.data[i] ?? 0)) }));
}

// Mid-tone colours readable on both the light and the dark panel.
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

export function seriesColor(i: number): string {
  return PALETTE[i % PALETTE.length];
}

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

export function config(spec: BarSpec): ChartConfiguration<"bar" | "line", number[], string> {
  const text = cssVar("--text", "#1d2330");
  const muted = cssVar("--muted", "#5d6678");
  const line = cssVar("--line", "#dde1e8");
  const danger = cssVar("--danger", "#b42318");
  const bars: ChartDataset<"bar" | "line", number[]>[] = spec.series.map((s, i) => ({
    type: "bar" as const,
    label: s.label,
    data: s.data,
    backgroundColor: seriesColor(i),
    borderWidth: 0,
  }));
  const lines: ChartDataset<"bar" | "line", number[]>[] = spec.lines.map((l, i) => ({
    type: "line" as const,
    label: l.label,
    data: spec.days.map(() => l.value),
    borderColor: danger,
    backgroundColor: danger,
    borderDash: i % 2 ? [2, 3] : [6, 4],
    borderWidth: 1.5,
    pointRadius: 0,
    pointHitRadius: 4,
    // Each line its own stack: a ceiling is not added to the bars or to another ceiling.
    stack: `ceiling-${i}`,
  }));
  return {
    type: "bar",
    data: { labels: spec.days.map((d) => d.slice(5)), datasets: [...bars, ...lines] },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      color: text,
      interaction: { mode: "index", intersect: false },
      scales: {
        x: { stacked: spec.stacked, ticks: { color: muted, maxRotation: 0, autoSkip: true }, grid: { display: false }, border: { color: line } },
        y: {
          stacked: spec.stacked,
          beginAtZero: true,
          title: { display: true, text: spec.yTitle, color: muted },
          ticks: { color: muted, precision: spec.integer ? 0 : undefined, callback: (v) => spec.format(Number(v)) },
          grid: { color: line },
          border: { color: line },
        },
      },
      plugins: {
        legend: { position: "bottom", labels: { color: text, boxWidth: 12 } },
        tooltip: {
          callbacks: {
            title: (items) => spec.days[items[0]?.dataIndex ?? 0] ?? "",
            label: (item) => `${item.dataset.label}: ${spec.format(Number(item.raw))}`,
          },
        },
      },
    },
  };
}

/** `use:barChart={spec}` on a canvas. */
export const barChart: Action<HTMLCanvasElement, BarSpec> = (canvas, initial) => {
  let spec = initial;
  let chart: Chart<"bar" | "line", number[], string> | null = null;
  const draw = () => {
    chart?.destroy();
    chart = null;
    // No 2D context (a test's DOM): nothing to draw on.
    if (!canvas.getContext("2d")) return;
    chart = new Chart(canvas, config(spec));
  };
  const scheme = window.matchMedia?.("(prefers-color-scheme: dark)");
  scheme?.addEventListener("change", draw);
  window.addEventListener(THEME_CHANGED, draw);
  draw();
  return {
    update(next: BarSpec) {
      spec = next;
      draw();
    },
    destroy() {
      scheme?.removeEventListener("change", draw);
      window.removeEventListener(THEME_CHANGED, draw);
      chart?.destroy();
      chart = null;
    },
  };
};
