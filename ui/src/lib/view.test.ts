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
  it("pages, searches the name field and keeps the parent filter", () => {
    expect(listSpec(state, 400)).toEqual({ object: "account", fields: ["name", "industry"], sort: state.sort, limit: 200, offset: 400 });
    const s = listSpec({ ...state, search: " acme ", where: { field: "account", op: "eq", value: "acc_1" } }, 0);
    expect(s.filters).toEqual({ all: [{ field: "account", op: "eq", value: "acc_1" }, { field: "name", op: "contains", value: "acme" }] });
    expect(exportSpec({ ...state, search: "x" })).not.toHaveProperty("limit");
    const cols = listSpec({ ...state, columnFilters: { industry: { op: "eq", value: "retail" }, name: { op: "contains", value: "" } } }, 0);
    expect(cols.filters).toEqual({ field: "industry", op: "eq", value: "retail" });
  });
  it("keeps a summary's set under a saved view's filters and the search", () => {
    const set = { all: [{ field: "account", op: "eq" as const, value: "acc_1" }, { field: "stage", op: "in" as const, value: ["prospecting"] }] };
    expect(listSpec({ ...state, set }, 0).filters).toEqual(set);
    const s = listSpec({ ...state, set, where: { field: "amount", op: "gt", value: 100 }, search: "big" }, 0);
    expect(s.filters).toEqual({ all: [set, { field: "amount", op: "gt", value: 100 }, { field: "name", op: "contains", value: "big" }] });
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
  it("loads a page at a time and stops when there is no more", async () => {
    const calls: [number, number][] = [];
    const all = Array.from({ length: 450 }, (_, i) => i);
    const pages = new Pages<number>(async (offset, limit) => {
      calls.push([offset, limit]);
      return { records: all.slice(offset, offset + limit), has_more: offset + limit < all.length };
    }, 200);
    await pages.ensure(0);
    expect(pages.rows.length).toBe(200);
    expect(pages.count).toBe(201);
    expect(await pages.ensure(10)).toBe(false);
    await pages.ensure(199);
    await pages.ensure(399);
    expect(pages.rows).toEqual(all);
    expect(pages.hasMore).toBe(false);
    expect(calls).toEqual([[0, 200], [200, 200], [400, 200]]);
    pages.reset();
    expect(pages.count).toBe(1);
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
