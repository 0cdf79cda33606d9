import { describe, expect, it } from "vitest";
import { currencyIn } from "./format";

describe("An amount's currency", () => {
  it("is its record's when the answer names where it is, else the workspace's", () => {
    const currencyOf = { total: "currency_code", amount: "invoice.currency_code" };
    expect(currencyIn(currencyOf, "total", { total: 5, currency_code: "EUR" }, "USD")).toBe("EUR");
    expect(currencyIn(currencyOf, "amount", { "invoice.currency_code": "GBP" }, "USD")).toBe("GBP");
    expect(currencyIn(currencyOf, "total", { total: 5, currency_code: null }, "USD")).toBe("USD");
    expect(currencyIn({}, "amount", { amount: 5 }, "USD")).toBe("USD");
  });
});
