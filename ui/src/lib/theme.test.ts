import { describe, expect, it } from "vitest";
import { applyTheme, isDark, savedTheme, setTheme } from "./theme";

describe("the theme", () => {
  it("is the system's until one is chosen, and the choice is kept", () => {
    localStorage.clear();
    expect(savedTheme()).toBe("system");
    setTheme("dark");
    expect(savedTheme()).toBe("dark");
    expect(document.documentElement.getAttribute("data-theme")).toBe("dark");
    expect(isDark()).toBe(true);
    setTheme("light");
    expect(isDark()).toBe(false);
    setTheme("system");
    expect(savedTheme()).toBe("system");
    expect(document.documentElement.hasAttribute("data-theme")).toBe(false);
  });

  it("applies to the element given", () => {
    const el = document.createElement("html");
    applyTheme("dark", el);
    expect(el.getAttribute("data-theme")).toBe("dark");
    applyTheme("system", el);
    expect(el.hasAttribute("data-theme")).toBe(false);
  });
});
