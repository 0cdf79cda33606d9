import { describe, expect, it } from "vitest";
import { rowKeydown } from "./rowKeys";

function list(n: number) {
  const body = document.createElement("tbody");
  const opened: number[] = [];
  for (let i = 0; i < n; i++) {
    const row = document.createElement("tr");
    row.tabIndex = 0;
    const button = document.createElement("button");
    row.append(button);
    row.addEventListener("keydown", (e) => rowKeydown(e, () => opened.push(i)));
    body.append(row);
  }
  document.body.replaceChildren(body);
  const rows = [...body.children] as HTMLElement[];
  const press = (on: HTMLElement, key: string) => {
    const e = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
    on.dispatchEvent(e);
    return e.defaultPrevented;
  };
  return { rows, opened, press };
}

describe("rowKeydown", () => {
  it("moves between rows with the arrows, Home and End, and stops at the ends", () => {
    const { rows, press } = list(3);
    rows[0].focus();
    press(rows[0], "ArrowDown");
    expect(document.activeElement).toBe(rows[1]);
    press(rows[1], "End");
    expect(document.activeElement).toBe(rows[2]);
    press(rows[2], "ArrowDown");
    expect(document.activeElement).toBe(rows[2]);
    press(rows[2], "Home");
    expect(document.activeElement).toBe(rows[0]);
    press(rows[0], "ArrowUp");
    expect(document.activeElement).toBe(rows[0]);
  });

  it("opens the focused row on Enter or Space, and leaves other keys and a control's keys alone", () => {
    const { rows, opened, press } = list(2);
    expect(press(rows[1], "Enter")).toBe(true);
    expect(press(rows[0], " ")).toBe(true);
    expect(opened).toEqual([1, 0]);
    expect(press(rows[0], "a")).toBe(false);
    rows[0].querySelector("button")!.focus();
    expect(press(rows[0].querySelector("button")!, "Enter")).toBe(false);
    expect(press(rows[0].querySelector("button")!, "ArrowDown")).toBe(false);
    expect(opened).toEqual([1, 0]);
    expect(document.activeElement).toBe(rows[0].querySelector("button"));
  });
});
