import { describe, expect, it } from "vitest";
import { citationNumbers, citationTarget, citationTitle, draftSentences, sentencePieces, stripMarkers, stripUnsafe } from "./summary";
import type { Citation } from "../bindings/Citation";
import type { SetCitation } from "../bindings/SetCitation";

const cite = (reference: string, at: number, field = "f", id = "a1"): Citation =>
  ({ reference, at, byModel: true, object: "account", id, field, label: field, fieldType: "text", value: null, display: "", recordName: "" }) as Citation;

const open: SetCitation = {
  object: "opportunity",
  filter: { all: [{ field: "account", op: "eq", value: "a1" }, { field: "stage", op: "in", value: ["prospecting", "proposal"] }] },
  operation: "count",
  label: "number of open opportunities",
};
// A rollup: the kernel cites it with the child object and the summarized record's id.
const rollup = (set: SetCitation, display: string, byModel = true): Citation => ({
  ...cite("open_opportunities_count", 0, set.field ?? "", "a1"),
  object: set.object,
  label: set.label,
  fieldType: "number",
  display,
  byModel,
  recordName: "Initech GmbH",
  set,
});

describe("the streamed draft", () => {
  it("reads finished and unfinished sentences without markers", () => {
    expect(draftSentences('{"sentences":["Acme [F1] earns 5 [F3].","It has 12 sta')).toEqual(["Acme earns 5.", "It has 12 sta"]);
    expect(draftSentences('{"sentences": ["A \\"quoted\\" name [F2, F4] here", "Next [F1')).toEqual(['A "quoted" name here', "Next"]);
    expect(draftSentences('{"senten')).toEqual([]);
    expect(draftSentences('{"insufficient": "no facts"}')).toEqual([]);
    expect(draftSentences('{"sentences":["caf\\u00e9 \\u00')).toEqual(["café"]);
  });
  it("shows no control or bidi character the model wrote, raw or escaped", () => {
    expect(draftSentences('{"sentences":["Acme\u202e closes \\u2066on 5\\u2069 [F1]\u001b.\\u2028Next"]}')).toEqual(["Acme closes on 5. Next"]);
    expect(stripUnsafe("a\tb\u0085c\u0007d\u202ae")).toBe("a b cde");
  });
  it("strips markers, and a marker still being written", () => {
    expect(stripMarkers("Revenue 5 [F3]. Staff 9 [F1, F2].")).toBe("Revenue 5. Staff 9.");
    expect(stripMarkers("Revenue 5 [F")).toBe("Revenue 5");
    expect(stripMarkers("Novak [31] is [a] CEO [F2,5].")).toBe("Novak is [a] CEO.");
  });
});

describe("a checked sentence", () => {
  it("puts each citation after the value it states, numbered once per fact", () => {
    const s = { text: "Acme earns 5 in €uro 😀 land.", citations: [cite("F3", 12), cite("F9", 29), cite("F1", 4)], clause: false };
    const n = citationNumbers([s, { text: "Again 5.", citations: [cite("F3", 7)], clause: false }]);
    const pieces = sentencePieces(s, n).map((p) => ("text" in p ? p.text : `[${p.n}]`));
    expect(pieces).toEqual(["Acme", "[1]", " earns 5", "[2]", " in €uro 😀 land.", "[3]"]);
    expect(n(cite("F3", 0))).toBe(2);
  });
  it("leads to a field here, or to another record", () => {
    expect(citationTarget(cite("F1", 0, "rating"), "account", "a1")).toEqual({ field: "rating" });
    expect(citationTarget(cite("F9", 0, "body", "n7"), "account", "a1")).toEqual({ object: "account", id: "n7" });
  });
  it("leads a rollup to the rows it is computed over, even when it names this record or another", () => {
    expect(citationTarget(rollup(open, "2"), "account", "a1")).toEqual({ set: open });
    const newest = { ...open, field: "name", operation: "newest", label: "newest note" };
    expect(citationTarget({ ...rollup(newest, "Call back"), id: "n7" }, "account", "a1")).toEqual({ set: newest });
    expect(citationTarget({ ...rollup(open, "2"), object: "account" }, "account", "a1")).toEqual({ set: open });
  });
  it("says in its tooltip what a citation states, and which rows a rollup opens", () => {
    expect(citationTitle({ ...cite("F1", 0, "rating"), display: "Hot" }, "account", "a1")).toBe("rating: Hot");
    expect(citationTitle({ ...cite("F9", 0, "body", "n7"), object: "note", recordName: "Call" }, "account", "a1")).toBe("body of Call (note): ");
    expect(citationTitle(rollup(open, "2"), "account", "a1")).toBe("number of open opportunities: 2 — opens the 2 rows");
    expect(citationTitle(rollup(open, "1"), "account", "a1")).toBe("number of open opportunities: 1 — opens the 1 row");
    const sum = { ...open, field: "amount", operation: "sum", label: "total amount of open opportunities in USD" };
    expect(citationTitle(rollup(sum, "12,000.00 USD", false), "account", "a1")).toBe(
      "total amount of open opportunities in USD: 12,000.00 USD — opens the rows it is computed over — cited by Countersign: the one fact that states this value",
    );
  });
});
