import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/record/iso-time.js";

describe("isoTime", () => {
  it("is the ISO text of the time given, whether it repeats, moves on or goes back", () => {
    const times = [0, 1_767_225_600_000, 1_767_225_600_000, 1_767_225_600_001, 1_767_225_599_999, 1_767_225_600_001, -1, 253_402_300_799_999];
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it("defaults to now", () => {
    const before = Date.now();
    const at = Date.parse(isoTime());
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  it("refuses an invalid time as Date does, and the next valid one is still right", () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(isoTime(5)).toBe("1970-01-01T00:00:00.005Z");
  });
});
