import { describe, expect, it } from "vitest";
import { currencyIn, rowCurrency, withRowCurrencies } from "./format";

describe("An amount's currency", () => {
  it("is its record's when the answer names where it is, else the workspace's", () => {
    const currencyOf = { total: "currency_code", amount: "invoice.currency_code" };
    expect(currencyIn(currencyOf, "total", { total: 5, currency_code: "EUR" }, "USD")).toBe("EUR");
    expect(currencyIn(currencyOf, "amount", { "invoice.currency_code": "GBP" }, "USD")).toBe("GBP");
    expect(currencyIn(currencyOf, "total", { total: 5, currency_code: null }, "USD")).toBe("USD");
    expect(currencyIn({}, "amount", { amount: 5 }, "USD")).toBe("USD");
  });
});

describe("Rows with their amounts' currencies", () => {
  it("keeps each amount column's currency on its row, read once", () => {
    const rows = withRowCurrencies(
      [
        { id: "a", unit_price: 150, amount: 1050, "invoice.currency_code": "EUR" },
        { id: "b", unit_price: 150, amount: 2700, "invoice.currency_code": "USD" },
      ],
      { unit_price: "invoice.currency_code", amount: "invoice.currency_code" },
      "USD",
    );
    expect(rows.map((r) => [rowCurrency(r, "unit_price", "USD"), rowCurrency(r, "amount", "USD")])).toEqual([
      ["EUR", "EUR"],
      ["USD", "USD"],
    ]);
    expect(rowCurrency({ id: "c" }, "amount", "GBP")).toBe("GBP");
  });
});
