import { describe, expect, it } from "vitest";
import { chips, choose, describeChip, parseChipValue, setChipValue, withChips } from "./askSpec";
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
