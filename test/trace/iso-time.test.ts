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

describe("isoTime within a minute", () => {
  it("writes every millisecond of a minute as Date does, going forwards, backwards and across minutes, years and 1970", () => {
    const starts = [0, -60_000, 1_767_225_540_000, 951_782_340_000 /* 2000-02-28T23:59 */, 253_402_300_740_000 /* 9999-12-31T23:59 */];
    for (const start of starts) {
      for (let ms = start - 1_500; ms < start + 61_500; ms += 7) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      for (let ms = start + 61_000; ms > start - 1_000; ms -= 997) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    // Past year 9999 the text is longer (+010000-…): the minute's text is cut from it all the same.
    for (const ms of [253_402_300_800_000, 253_402_300_800_001, 253_402_300_859_999]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it("a fraction of a millisecond is cut as Date cuts it", () => {
    for (const ms of [1_767_225_600_000, 1_767_225_600_000.25, 1_767_225_600_001.75, -0.5, 1_767_225_600_002]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});
