import { afterEach, describe, expect, it } from "vitest";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { api, CommandError } from "./api";
import { showError } from "./errors";
import { changed, editText, formatValue, inputValue } from "./format";
import { exportSpec, listSpec, toggleSort } from "./listSpec";
import { Pages } from "./pages";
import type { FieldView } from "../bindings/FieldView";

const money: FieldView = { key: "total", label: "Total", type: "currency", access: "edit", required: false, unique: false, precision: 12, scale: 2 };
const picklist: FieldView = {
  key: "status", label: "Status", type: "picklist", access: "edit", required: true, unique: false,
  values: [{ value: "paid", label: "Paid", active: true }, { value: "disputed", label: "Disputed", active: false }],
};

describe("format", () => {
  it("shows currency with its scale and picklists by label, blanks as empty", () => {
    expect(formatValue(money, 16800, "USD")).toMatch(/16,800\.00/);
    expect(formatValue(picklist, "disputed")).toBe("Disputed");
    expect(formatValue(money, null)).toBe("");
    expect(formatValue({ type: "boolean" }, false)).toBe("No");
  });
  it("edits numbers as plain text with their scale and sends them as text", () => {
    expect(editText(money, 16800)).toBe("16800.00");
    expect(inputValue(money, " 1,234.50 ")).toBe("1234.50");
    expect(inputValue(money, "  ")).toBeNull();
    expect(inputValue({ type: "boolean" }, "true")).toBe(true);
    expect(changed(money, 16800, "16800.00")).toBe(false);
    expect(changed(money, 16800, "16800.01")).toBe(true);
  });
});

describe("list specs", () => {
  const state = { object: "account", columns: ["name", "industry"], search: "", sort: [{ field: "name", direction: "asc" as const }] };
  it("pages by cursor, searches every text field and keeps the parent filter", () => {
    expect(listSpec(state, null)).toEqual({ object: "account", fields: ["name", "industry"], sort: state.sort, limit: 200 });
    const after = { values: ["Acme"], row: 7 };
    expect(listSpec(state, after).after).toEqual(after);
    const s = listSpec({ ...state, search: " acme ", where: { field: "account", op: "eq", value: "acc_1" } }, null);
    expect(s.filters).toEqual({ field: "account", op: "eq", value: "acc_1" });
    expect(s.search).toBe("acme");
    expect(listSpec(state, null)).not.toHaveProperty("search");
    expect(exportSpec({ ...state, search: "x" })).not.toHaveProperty("limit");
    expect(exportSpec({ ...state, search: "x" }).search).toBe("x");
    const cols = listSpec({ ...state, columnFilters: { industry: { op: "eq", value: "retail" }, name: { op: "contains", value: "" } } }, null);
    expect(cols.filters).toEqual({ field: "industry", op: "eq", value: "retail" });
  });
  it("keeps a summary's set under a saved view's filters and the search", () => {
    const set = { all: [{ field: "account", op: "eq" as const, value: "acc_1" }, { field: "stage", op: "in" as const, value: ["prospecting"] }] };
    expect(listSpec({ ...state, set }, null).filters).toEqual(set);
    const s = listSpec({ ...state, set, where: { field: "amount", op: "gt", value: 100 }, search: "big" }, null);
    expect(s.filters).toEqual({ all: [set, { field: "amount", op: "gt", value: 100 }] });
    expect(s.search).toBe("big");
    expect(exportSpec({ ...state, set }).filters).toEqual(set);
  });
  it("cycles a column's sort", () => {
    expect(toggleSort([], "total")).toEqual([{ field: "total", direction: "asc" }]);
    expect(toggleSort([{ field: "total", direction: "asc" }], "total")).toEqual([{ field: "total", direction: "desc" }]);
    expect(toggleSort([{ field: "total", direction: "desc" }], "total")).toEqual([]);
  });
});

describe("errors", () => {
  it("puts rule failures on their fields and other errors in a banner", () => {
    const rule = {
      code: "record.validation_rule" as const, fault: "user" as const, retriable: false, field: "paid_date",
      message: "A paid invoice needs a paid date.", details: [{ path: "paid_date", message: "A paid invoice needs a paid date." }],
    };
    expect(showError(rule, ["status", "paid_date"])).toEqual({ fields: { paid_date: "A paid invoice needs a paid date." }, banner: null });
    const conflict = { code: "conflict" as const, fault: "user" as const, retriable: false, message: "changed since" };
    expect(showError(conflict, ["status"])).toEqual({ fields: {}, banner: "changed since" });
    // A field error for a field not on the page still shows.
    const hidden = { code: "record.invalid_value" as const, fault: "user" as const, retriable: false, field: "x", message: "bad" };
    expect(showError(hidden, ["status"]).banner).toBe("bad");
  });
});

describe("pages", () => {
  // A list of 450 numbers served as the kernel does: a page after a cursor (the last row's
  // value), and the cursor at a position.
  const all = Array.from({ length: 450 }, (_, i) => i);
  function served(calls: string[]) {
    return new Pages<number>(
      async (after, limit) => {
        const from = after ? Number(after.values[0]) + 1 : 0;
        calls.push(`page from ${from}`);
        const records = all.slice(from, from + limit);
        const more = from + limit < all.length;
        return { records, has_more: more, next: more ? { values: [records.at(-1)!], row: records.at(-1)! } : null };
      },
      async (position) => {
        calls.push(`seek ${position}`);
        return position > 0 && position <= all.length ? { values: [position - 1], row: position - 1 } : null;
      },
      200,
    );
  }
  it("follows each page's cursor and stops when there is no more", async () => {
    const calls: string[] = [];
    const pages = served(calls);
    expect(pages.count).toBe(1);
    await pages.ensure(0);
    expect(pages.loadedFromStart).toBe(200);
    expect(pages.count).toBe(201);
    expect(await pages.ensure(10)).toBe(false);
    await pages.ensure(199, 399);
    await pages.ensure(449);
    expect(Array.from({ length: 450 }, (_, i) => pages.row(i))).toEqual(all);
    expect(pages.hasMore).toBe(false);
    expect(pages.count).toBe(450);
    expect(calls).toEqual(["page from 0", "page from 200", "page from 400"]);
    // After a reset the old rows show until the new list's first page arrives.
    pages.reset();
    expect(pages.row(3)).toBe(3);
    expect(pages.count).toBe(450);
    await pages.ensure(0);
    expect(pages.count).toBe(201);
    expect(pages.row(300)).toBeUndefined();
  });
  it("starts a page far down from the cursor at its position, with the total known", async () => {
    const calls: string[] = [];
    const pages = served(calls);
    pages.total = 450;
    await pages.ensure(410);
    expect(calls).toEqual(["seek 400", "page from 400"]);
    expect(pages.row(410)).toBe(410);
    expect(pages.row(10)).toBeUndefined();
    expect(pages.count).toBe(450);
    expect(pages.hasMore).toBe(true);
  });
});

describe("api", () => {
  afterEach(() => clearMocks());
  it("calls the commands with camelCase arguments", async () => {
    const seen: [string, unknown][] = [];
    mockIPC((cmd, args) => {
      seen.push([cmd, args]);
      return { path: "/tmp/x.csv", records: 3 };
    });
    await api.suggestImport("account", { name: "a.csv", contentBase64: "YSxiCg==" }, "hubspot");
    await api.exportCsv({ object: "account" }, "accounts");
    expect(seen).toEqual([
      ["suggest_import", { object: "account", file: { name: "a.csv", contentBase64: "YSxiCg==" }, tool: "hubspot" }],
      ["export_csv", { spec: { object: "account" }, name: "accounts" }],
    ]);
  });
  it("passes a cancelled native dialog on as null", async () => {
    const seen: [string, unknown][] = [];
    mockIPC((cmd, args) => {
      seen.push([cmd, args]);
      return null;
    });
    expect(await api.exportCsv({ object: "account" }, "accounts")).toBeNull();
    expect(await api.chooseWorkspace()).toBeNull();
    expect(await api.chooseNewWorkspace("freelance", false)).toBeNull();
    await api.forgetRecentWorkspace("/w/gone.countersign");
    await api.restoreBackup("/w/b.countersign.backups/b.20260101T000000Z.daily.countersign");
    expect(seen).toEqual([
      ["export_csv", { spec: { object: "account" }, name: "accounts" }],
      ["choose_workspace", {}],
      ["choose_new_workspace", { template: "freelance", records: false }],
      ["forget_recent_workspace", { path: "/w/gone.countersign" }],
      ["restore_backup", { path: "/w/b.countersign.backups/b.20260101T000000Z.daily.countersign" }],
    ]);
  });
  it("turns a kernel error into a CommandError with its code", async () => {
    mockIPC(() => {
      throw { code: "permission", fault: "user", message: "you cannot edit Accounts", retriable: false };
    });
    const e = await api.save({ op: "update", object: "account", id: "a", changes: {} }).catch((e) => e);
    expect(e).toBeInstanceOf(CommandError);
    expect(e.error.code).toBe("permission");
  });
});
