import { describe, expect, it } from "vitest";
import { base64Of, valueChoices } from "./importing";

describe("import wizard", () => {
  it("encodes bytes as base64 across chunks", () => {
    const bytes = new Uint8Array(70000).map((_, i) => i % 251);
    const back = Uint8Array.from(atob(base64Of(bytes)), (c) => c.charCodeAt(0));
    expect(back).toEqual(bytes);
    expect(base64Of(new TextEncoder().encode("a,b\n"))).toBe("YSxiCg==");
  });
  it("turns the choices into the value map, leaving added values as they are", () => {
    expect(
      valueChoices({ department: { Enginering: { map: "engineering" }, Opps: "blank", Legal: "add" }, stage: { Later: "add" } }),
    ).toEqual({ department: { Enginering: "engineering", Opps: "" } });
  });
});
