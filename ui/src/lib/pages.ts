// Rows of a large list, loaded a page at a time as the user scrolls (the kernel pages with
// limit/offset; nothing holds all 100k rows).
import { PAGE } from "./listSpec";

export type Page<T> = { records: T[]; has_more: boolean };

export class Pages<T> {
  rows: T[] = [];
  hasMore = true;
  private inflight: Promise<void> | null = null;
  private generation = 0;

  constructor(
    private readonly fetch: (offset: number, limit: number) => Promise<Page<T>>,
    private readonly pageSize = PAGE,
  ) {}

  /** Rows to show: what is loaded, plus one placeholder row while more exist. */
  get count(): number {
    return this.rows.length + (this.hasMore ? 1 : 0);
  }

  /** Load the next page if `index` is at or past the loaded end. Resolves true if rows changed. */
  async ensure(index: number): Promise<boolean> {
    if (index < this.rows.length - this.pageSize / 4 || !this.hasMore) return false;
    if (this.inflight) {
      await this.inflight;
      return true;
    }
    const gen = this.generation;
    this.inflight = this.fetch(this.rows.length, this.pageSize).then((p) => {
      if (gen !== this.generation) return;
      this.rows = this.rows.concat(p.records);
      this.hasMore = p.has_more;
    });
    try {
      await this.inflight;
    } finally {
      this.inflight = null;
    }
    return true;
  }

  /** Forget everything (new sort, search or user); the next `ensure(0)` loads page one. */
  reset(): void {
    this.generation += 1;
    this.rows = [];
    this.hasMore = true;
    this.inflight = null;
  }
}
