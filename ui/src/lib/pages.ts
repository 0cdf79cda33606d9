// The rows of a long list, loaded a page at a time where the user looks. Pages follow each
// other by keyset cursor (a page's `next`); a page far from any loaded one (the scroll bar
// dragged half-way down a million rows) starts from the cursor the kernel finds at that
// position. Nothing holds all the rows, and no page is counted off from the first row.
import type { Cursor } from "../bindings/Cursor";
import { PAGE } from "./listSpec";

export type Page<T> = { records: T[]; has_more: boolean; next?: Cursor | null };

type Loaded<T> = { rows: T[]; next: Cursor | null; more: boolean };

export class Pages<T> {
  /** Rows in the whole list when known (an unfiltered count, or a filtered one under the cap). */
  total: number | null = null;
  private pages = new Map<number, Loaded<T>>();
  // The list before a reset, shown until the new list's first page arrives: rows do not blink
  // away while the user types, and a click lands on the row they see.
  private stale = new Map<number, Loaded<T>>();
  private inflight = new Map<number, Promise<void>>();
  private generation = 0;

  constructor(
    private readonly fetch: (after: Cursor | null, limit: number) => Promise<Page<T>>,
    private readonly seek: (position: number) => Promise<Cursor | null>,
    private readonly pageSize = PAGE,
  ) {}

  /** Rows to give the list: the total when known, else what is loaded in a row from the start, plus one while more exist. */
  get count(): number {
    if (this.total !== null) return this.total;
    const pages = this.shown;
    let n = 0;
    for (let p = 0; ; p++) {
      const page = pages.get(p);
      if (!page) return p === 0 ? 1 : n + 1;
      n += page.rows.length;
      if (!page.more) return n;
    }
  }

  /** Rows loaded in a row from the start (what keyboard moves and "shown" count). */
  get loadedFromStart(): number {
    let n = 0;
    for (let p = 0; this.pages.has(p); p++) n += this.pages.get(p)!.rows.length;
    return n;
  }

  get hasMore(): boolean {
    if (this.total !== null) return this.loadedFromStart < this.total;
    let p = 0;
    while (this.pages.has(p + 1)) p++;
    return this.pages.get(p)?.more ?? true;
  }

  row(index: number): T | undefined {
    return this.shown.get(Math.floor(index / this.pageSize))?.rows[index % this.pageSize];
  }

  private get shown(): Map<number, Loaded<T>> {
    return this.pages.size === 0 && this.stale.size > 0 ? this.stale : this.pages;
  }

  /** Load the pages holding rows `from`…`to` that are not loaded. Resolves true if rows changed. */
  async ensure(from: number, to = from): Promise<boolean> {
    const gen = this.generation;
    const wanted: number[] = [];
    for (let p = Math.floor(from / this.pageSize); p <= Math.floor(to / this.pageSize); p++) {
      if (!this.pages.has(p) && (this.total === null || p * this.pageSize < this.total || p === 0)) wanted.push(p);
    }
    if (!wanted.length) return false;
    await Promise.all(wanted.map((p) => this.load(p, gen)));
    return gen === this.generation;
  }

  private load(p: number, gen: number): Promise<void> {
    const running = this.inflight.get(p);
    if (running) return running;
    const task = (async () => {
      const before = this.pages.get(p - 1);
      let after: Cursor | null = null;
      if (p > 0) {
        if (before) {
          if (!before.more) return;
          after = before.next;
        } else {
          after = await this.seek(p * this.pageSize);
          if (!after) return; // past the end
        }
      }
      const page = await this.fetch(after, this.pageSize);
      if (gen !== this.generation) return;
      this.stale.clear();
      this.pages.set(p, { rows: page.records, next: page.next ?? null, more: page.has_more });
    })().finally(() => this.inflight.delete(p));
    this.inflight.set(p, task);
    return task;
  }

  /** Start over (new sort, search or user); the next `ensure(0)` loads page one, and the old rows show until it arrives. */
  reset(): void {
    this.generation += 1;
    if (this.pages.size) this.stale = this.pages;
    this.pages = new Map();
    this.inflight.clear();
    this.total = null;
  }
}
