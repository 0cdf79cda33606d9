import { describe, expect, it } from "vitest";
import {
  backedUpNotice,
  byteSize,
  localTime,
  reasonLabel,
  recentEntries,
  restoredNotice,
  restoreQuestion,
  samePath,
  splitPath,
} from "./desktop";
import type { RecentWorkspace } from "../bindings/RecentWorkspace";

describe("times", () => {
  it("shows a UTC moment in the zone asked for, minutes only, 24-hour", () => {
    expect(localTime("2026-03-10T23:30:05Z", "UTC")).toBe("2026-03-10 23:30");
    // Tokyo is a day ahead; New York behind, and its midnight is 00 not 24.
    expect(localTime("2026-03-10T23:30:05Z", "Asia/Tokyo")).toBe("2026-03-11 08:30");
    expect(localTime("2026-01-01T05:00:00Z", "America/New_York")).toBe("2026-01-01 00:00");
    expect(localTime("2026-07-01T12:00:00Z", "Europe/Berlin")).toBe("2026-07-01 14:00");
  });
  it("leaves text that is no time as it is", () => {
    expect(localTime("", "UTC")).toBe("");
    expect(localTime("yesterday", "UTC")).toBe("yesterday");
  });
});

describe("sizes", () => {
  it("counts in binary units, one decimal below ten", () => {
    expect(byteSize(0)).toBe("0 B");
    expect(byteSize(1023)).toBe("1023 B");
    expect(byteSize(1024)).toBe("1 KiB");
    expect(byteSize(1536)).toBe("1.5 KiB");
    expect(byteSize(200 * 1024 + 300)).toBe("200 KiB");
    expect(byteSize(3.25 * 1024 * 1024)).toBe("3.3 MiB");
    expect(byteSize(42 * 1024 * 1024)).toBe("42 MiB");
    expect(byteSize(5 * 1024 ** 3)).toBe("5 GiB");
  });
  it("never shows 1024 of a unit", () => {
    expect(byteSize(1024 * 1024 - 100)).toBe("1 MiB");
    expect(byteSize(1024 * 1024 - 600)).toBe("1023 KiB");
  });
  it("shows nothing for a size that is no size", () => {
    expect(byteSize(-1)).toBe("");
    expect(byteSize(Number.NaN)).toBe("");
  });
});

describe("backups", () => {
  it("says why a backup was taken in words", () => {
    expect(reasonLabel("daily")).toBe("Daily");
    expect(reasonLabel("before_restore")).toBe("Before a restore");
    expect(reasonLabel("migration")).toMatch(/upgraded/);
    expect(reasonLabel("deploy")).toMatch(/deployed/);
    expect(reasonLabel("manual")).toMatch(/request/);
  });
  it("names the backup's time before a restore and says the current state is kept", () => {
    const q = restoreQuestion({ takenAt: "2026-03-10T23:30:00Z", reason: "daily" }, "UTC");
    expect(q).toContain("2026-03-10 23:30");
    expect(q).toContain("(daily)");
    expect(q).toMatch(/as it is now is backed up first/);
    expect(restoredNotice({ takenAt: "2026-03-10T23:30:00Z" }, "Asia/Tokyo")).toMatch(/^Restored the backup taken 2026-03-11 08:30\./);
  });
  it("names the new backup's file and size", () => {
    expect(backedUpNotice({ path: "/w/books.countersign.backups/books.20260310T233000Z.manual.countersign", bytes: 2048 })).toBe(
      "Backed up: books.20260310T233000Z.manual.countersign (2 KiB).",
    );
  });
});

describe("paths", () => {
  it("splits a path into its file name and folder, either separator", () => {
    expect(splitPath("/home/ana/books.countersign")).toEqual({ name: "books.countersign", folder: "/home/ana" });
    expect(splitPath("C:\\Users\\Ana\\books.countersign")).toEqual({ name: "books.countersign", folder: "C:\\Users\\Ana" });
    expect(splitPath("/books.countersign")).toEqual({ name: "books.countersign", folder: "/" });
    expect(splitPath("books.countersign")).toEqual({ name: "books.countersign", folder: "" });
  });
  it("takes trailing separators and Windows separators as the same file", () => {
    expect(samePath("C:\\w\\a.countersign", "C:/w/a.countersign")).toBe(true);
    expect(samePath("/w/a.countersign/", "/w/a.countersign")).toBe(true);
    expect(samePath("/w/a.countersign", "/w/b.countersign")).toBe(false);
  });
});

describe("recent workspaces", () => {
  const w = (path: string, openedAt: string, exists = true): RecentWorkspace => ({ path, openedAt, exists });
  it("lists the newest first, each file once, the open one and the missing ones marked", () => {
    const list = [
      w("/w/old.countersign", "2026-01-01T10:00:00Z"),
      w("/w/gone.countersign", "2026-02-01T10:00:00Z", false),
      w("/w/books.countersign", "2026-03-01T10:00:00Z"),
      w("/w/old.countersign", "2025-12-01T10:00:00Z"),
    ];
    const entries = recentEntries(list, "/w/books.countersign", "UTC");
    expect(entries.map((e) => e.name)).toEqual(["books.countersign", "gone.countersign", "old.countersign"]);
    expect(entries[0]).toEqual({
      path: "/w/books.countersign",
      name: "books.countersign",
      folder: "/w",
      when: "2026-03-01 10:00",
      exists: true,
      current: true,
    });
    expect(entries[1]).toMatchObject({ exists: false, current: false });
    // The newer of the two entries for one file is the one kept.
    expect(entries[2].when).toBe("2026-01-01 10:00");
  });
  it("marks nothing as open when no workspace is", () => {
    expect(recentEntries([w("/w/a.countersign", "2026-01-01T10:00:00Z")], null).some((e) => e.current)).toBe(false);
    expect(recentEntries([], "/w/a.countersign")).toEqual([]);
  });
});
