import { describe, expect, it } from "vitest";
import { chips, choose, conditionText, datePhraseOf, describeChip, parseChipValue, setChipValue, swapsFor, termOf, withChips } from "./askSpec";
import type { QuerySpec } from "../bindings/QuerySpec";
import type { Resolution } from "../bindings/Resolution";
import type { TermChoice } from "../bindings/TermChoice";

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

describe("Term chips", () => {
  const open: TermChoice = {
    key: "open_opportunity",
    label: "Open opportunity",
    condition: { all: [
      { field: "stage", op: "in", value: ["prospecting", "qualification"] },
      { field: "amount", op: "gt", value: 0 },
    ] },
  };
  const keyAccount: TermChoice = { key: "account.key_account", label: "Key account", condition: { field: "account.tier", op: "eq", value: "key" } };
  const terms = [keyAccount, open];

  it("a chip that is a term's condition reads as the term", () => {
    const spec: QuerySpec = { object: "opportunity", filters: { all: [open.condition, { field: "owner", op: "eq", value: "usr_1" }] } };
    expect(termOf(chips(spec)[0], terms)).toBe(open);
    expect(describeChip(chips(spec)[0], [], undefined, [], terms)).toEqual({ field: "stage", op: "is", text: "Open opportunity", term: open });
    expect(describeChip(keyAccount.condition, [], undefined, [], terms)?.term?.key).toBe("account.key_account");
  });

  it("the same condition with its keys in another order is still the term", () => {
    const reordered = { all: [
      { value: ["prospecting", "qualification"], op: "in" as const, field: "stage" },
      { op: "gt" as const, value: 0, field: "amount" },
    ] };
    expect(termOf(reordered, terms)).toBe(open);
    expect(describeChip(reordered, [], undefined, [], terms)?.text).toBe("Open opportunity");
  });

  it("a chip that differs from every term's condition is not a term", () => {
    const other = { all: [{ field: "stage", op: "in" as const, value: ["prospecting"] }, { field: "amount", op: "gt" as const, value: 0 }] };
    expect(termOf(other, terms)).toBeNull();
    expect(termOf({ field: "account.tier", op: "eq", value: "key" }, [])).toBeNull();
    // Lists compare in order: the spec holds a term's condition as the term wrote it.
    expect(termOf({ all: [...other.all].reverse() }, [{ ...open, condition: other }])).toBeNull();
    expect(describeChip({ field: "amount", op: "gt", value: 0 }, [], undefined, [], terms)).toEqual({ field: "amount", op: ">", text: "0" });
  });

  it("a term's condition reads as its comparisons", () => {
    const label = (f: string) => ({ stage: "Stage", amount: "Amount" })[f] ?? f;
    expect(conditionText(open.condition, label, (_f, v) => v[0].toUpperCase() + v.slice(1))).toBe(
      "Stage is one of Prospecting, Qualification and Amount > 0",
    );
    expect(conditionText({ any: [{ field: "a", op: "is_set" }, { not: { field: "b", op: "eq", value: 1 } }] })).toBe("a is set or b not = 1");
  });
});

describe("Readings of the question (Ask version 4)", () => {
  it("reads a condition on related records as what the records have", () => {
    expect(conditionText({ related: { object: "note", via: "account", has: "none" } })).toBe("has no note");
    expect(conditionText({ related: { object: "contact", via: "account", has: "at_least", count: 5 } })).toBe(
      "has at least 5 contact",
    );
    expect(
      conditionText({
        related: { object: "invoice", via: "account", has: "some", filter: { field: "status", op: "eq", value: "overdue" } },
      }),
    ).toBe("has invoice (status = overdue)");
  });

  it("offers a chip the other readings of its words as swaps", () => {
    const department = { field: "department", op: "eq" as const, value: "engineering" };
    const title = { field: "title", op: "eq" as const, value: "Engineer" };
    const read = [
      { id: "c1", words: "Engineers", meaning: "Department is Engineering", chosen: true, condition: department },
      { id: "c2", words: "Engineers", meaning: "Title is Engineer", chosen: false, condition: title },
      { id: "c3", words: "UK", meaning: "Country is United Kingdom", chosen: false, condition: undefined },
    ];
    expect(swapsFor(department, read).map((r) => r.id)).toEqual(["c2"]);
    expect(swapsFor(title, read)).toEqual([]);
  });
});
