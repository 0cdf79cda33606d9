// The rows of a long list drawn in a window of fixed-height rows. A browser cannot lay out an
// element taller than about 33 million pixels (WebKit's limit), which a million rows of 34 px
// pass; past `MAX_PX` the scroll area is squeezed and a scroll position maps to a row in
// proportion, so the scroll bar still spans the whole list.

export const MAX_PX = 8_000_000;

export type Window = {
  /** The first row to draw and how many. */
  first: number;
  count: number;
  /** Where the first row is drawn, in the scroll area's pixels. */
  top: number;
  /** The scroll area's height. */
  height: number;
};

/** The scroll area's height for `rows` rows. */
export function areaHeight(rows: number, rowPx: number): number {
  return Math.min(rows * rowPx, MAX_PX);
}

/** How far the list moves per pixel scrolled (1 unless squeezed). */
function scale(rows: number, rowPx: number, viewport: number): number {
  const full = rows * rowPx;
  const area = areaHeight(rows, rowPx);
  if (full <= area || area <= viewport) return 1;
  return (full - viewport) / (area - viewport);
}

/** The rows to draw at a scroll position, with `overscan` rows either side. */
export function windowAt(scrollTop: number, viewport: number, rows: number, rowPx: number, overscan = 8): Window {
  const s = scale(rows, rowPx, viewport);
  const listTop = scrollTop * s; // where the viewport's top is in the whole list
  const firstVisible = Math.floor(listTop / rowPx);
  const first = Math.max(0, Math.min(firstVisible - overscan, rows));
  const last = Math.min(rows, Math.ceil((listTop + viewport) / rowPx) + overscan);
  return { first, count: Math.max(0, last - first), top: scrollTop + (first * rowPx - listTop), height: areaHeight(rows, rowPx) };
}

/** The scroll position that shows row `index` (at the top, or just in view if `nearest`). */
export function scrollFor(index: number, scrollTop: number, viewport: number, rows: number, rowPx: number, nearest = true): number {
  const s = scale(rows, rowPx, viewport);
  const rowTop = index * rowPx;
  const listTop = scrollTop * s;
  let target = rowTop;
  if (nearest) {
    if (rowTop >= listTop && rowTop + rowPx <= listTop + viewport) return scrollTop;
    if (rowTop + rowPx > listTop + viewport) target = rowTop + rowPx - viewport;
  }
  return Math.max(0, Math.min(target / s, areaHeight(rows, rowPx) - viewport));
}
