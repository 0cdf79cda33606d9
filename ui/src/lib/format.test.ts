import { afterEach, describe, expect, it } from "vitest";
import { currencyIn, editText, formatValue, inputValue, rowCurrency, setLocale, withRowCurrencies } from "./format";

describe("Values in the reader's locale", () => {
  afterEach(() => setLocale(null));
  const total = { type: "currency" as const, scale: 2 };
  const due = { type: "date" as const };

  it("writes dates and amounts as a German reader writes them, and reads what they type", () => {
    setLocale("de-DE");
    expect(formatValue(total, 71150, "USD")).toMatch(/^71\.150,00\s\$$/);
    expect(formatValue(due, "2026-04-02")).toBe("02.04.2026");
    expect(editText(total, 71150.5)).toBe("71150,50");
    expect(inputValue(total, "71.150,50")).toBe("71150.50");
    expect(inputValue(total, "12,5")).toBe("12.5");
  });

  it("keeps dates as stored and reads English numbers when no locale was chosen", () => {
    setLocale(null);
    expect(formatValue(due, "2026-04-02")).toBe("2026-04-02");
    expect(editText(total, 71150.5)).toBe("71150.50");
    expect(inputValue(total, "71,150.50")).toBe("71150.50");
    setLocale("fr-FR");
    expect(formatValue(due, "2026-04-02")).toBe("2 avr. 2026");
  });
});

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
