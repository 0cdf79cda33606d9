import { describe, expect, it } from "vitest";
import { chips, choose, datePhraseOf, describeChip, parseChipValue, setChipValue, withChips } from "./askSpec";
import type { QuerySpec } from "../bindings/QuerySpec";
import type { Resolution } from "../bindings/Resolution";

const spec: QuerySpec = {
  object: "contact",
  fields: ["last_name", "account.name"],
  filters: {
    all: [
      { field: "account", op: "in", value: ["acc_1", "acc_2"] },
      { not: { field: "department", op: "in", value: ["sales", "finance"] } },
      { field: "do_not_call", op: "eq", value: true },
    ],
  },
  sort: [],
  limit: 200,
};
const ambiguous: Resolution = {
  field: "account",
  object: "account",
  written: "Systems",
  status: "ambiguous",
  matches: [
    { id: "acc_1", name: "Bluth Systems" },
    { id: "acc_2", name: "Duff Systems" },
  ],
};

describe("Ask spec chips", () => {
  it("splits a top-level all into chips and joins them back", () => {
    expect(chips(spec)).toHaveLength(3);
    const one = withChips(spec, chips(spec).slice(2));
    expect(one.filters).toEqual({ field: "do_not_call", op: "eq", value: true });
    expect(withChips(spec, []).filters).toBeUndefined();
  });

  it("describes chips with resolved names and negation", () => {
    expect(describeChip(chips(spec)[0], [ambiguous])).toEqual({ field: "account", op: "is one of", text: "Bluth Systems, Duff Systems" });
    expect(describeChip(chips(spec)[1], [])?.op).toBe("not is one of");
    expect(describeChip(chips(spec)[1], [], (_f, v) => v.toUpperCase())?.text).toBe("SALES, FINANCE");
  });

  it("parses typed values by field type", () => {
    expect(parseChipValue("50,000", "currency", false)).toBe(50000);
    expect(parseChipValue("sent, overdue", "picklist", true)).toEqual(["sent", "overdue"]);
    expect(parseChipValue("yes", "boolean", false)).toBe(true);
    expect(setChipValue(chips(spec)[1], ["sales"])).toEqual({ not: { field: "department", op: "in", value: ["sales"] } });
  });

  it("turns an ambiguous value into the chosen record", () => {
    const chosen = choose(spec, ambiguous, ambiguous.matches[1]);
    expect(chips(chosen)[0]).toEqual({ field: "account", op: "eq", value: "acc_2" });
    expect(chips(chosen)[2]).toEqual(chips(spec)[2]);
  });
});

describe("Date chips", () => {
  const march = { field: "due_date", phrase: "March 2026", start: "2026-03-01", end: "2026-03-31" };
  const range = { all: [
    { field: "due_date", op: "gte" as const, value: "2026-03-01" },
    { field: "due_date", op: "lte" as const, value: "2026-03-31" },
  ] };
  it("a range the kernel read reads as the question's phrase", () => {
    expect(describeChip(range, [], undefined, [march])).toEqual({ field: "due_date", op: "during", text: "March 2026" });
  });
  it("a date-time range ends before the next day's start", () => {
    const october = { field: "written_at", phrase: "October 2026", start: "2026-10-01", end: "2026-10-31" };
    const c = { all: [
      { field: "written_at", op: "gte" as const, value: "2026-10-01T00:00:00Z" },
      { field: "written_at", op: "lt" as const, value: "2026-11-01T00:00:00Z" },
    ] };
    expect(datePhraseOf(c, [october])?.phrase).toBe("October 2026");
  });
  it("an open range and a range on another field or day are not that phrase", () => {
    const before = { field: "paid_date", phrase: "before the end of June 2025", end: "2025-06-30" };
    expect(datePhraseOf({ field: "paid_date", op: "lte", value: "2025-06-30" }, [before])?.phrase).toBe(before.phrase);
    expect(datePhraseOf({ field: "issue_date", op: "lte", value: "2025-06-30" }, [before])).toBeNull();
    const other = { all: [{ field: "due_date", op: "gte" as const, value: "2026-04-01" }, range.all[1]] };
    expect(datePhraseOf(other, [march])).toBeNull();
  });
});
