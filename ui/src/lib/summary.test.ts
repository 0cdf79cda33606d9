import { describe, expect, it } from "vitest";
import { citationNumbers, citationTarget, draftSentences, sentencePieces, stripMarkers, stripUnsafe } from "./summary";
import type { Citation } from "../bindings/Citation";

const cite = (reference: string, at: number, field = "f", id = "a1"): Citation =>
  ({ reference, at, byModel: true, object: "account", id, field, label: field, fieldType: "text", value: null, display: "", recordName: "" }) as Citation;

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
    const s = { text: "Acme earns 5 in €uro 😀 land.", citations: [cite("F3", 12), cite("F9", 29), cite("F1", 4)] };
    const n = citationNumbers([s, { text: "Again 5.", citations: [cite("F3", 7)] }]);
    const pieces = sentencePieces(s, n).map((p) => ("text" in p ? p.text : `[${p.n}]`));
    expect(pieces).toEqual(["Acme", "[1]", " earns 5", "[2]", " in €uro 😀 land.", "[3]"]);
    expect(n(cite("F3", 0))).toBe(2);
  });
  it("leads to a field here, or to another record", () => {
    expect(citationTarget(cite("F1", 0, "rating"), "account", "a1")).toEqual({ field: "rating" });
    expect(citationTarget(cite("F9", 0, "body", "n7"), "account", "a1")).toEqual({ object: "account", id: "n7" });
  });
});
