import { afterAll, beforeAll, expect, it } from "vitest";
import type { Inspector } from "../../src/inspect/server.js";
import { BROWSER_TEST_TIMEOUT, type Browser, openInspectorPage, closeInspectorPage, describeWithBrowser } from "../inspect/support/browser.js";

let inspector: Inspector;
let browser: Browser;

beforeAll(async () => {
  ({ inspector, browser } = await openInspectorPage());
}, BROWSER_TEST_TIMEOUT);

afterAll(() => closeInspectorPage({ inspector, browser }));

// The selected step's panel is patched with morph() every frame of a stream (src/inspect/page/morph.js): the result
// must be exactly what putting the fresh copy in would show, keeping the elements that can be kept.
describeWithBrowser("inspector page: morph", () => {
  it("makes a part of the page match a fresh copy, keeping the elements of the same tag and changing only what differs", async () => {
    // The page's own module as the page loads it (a string, so that the test's transform leaves the import alone).
    await browser.page.evaluate('import("/morph.js").then((m) => { window.morphForTest = m.morph; })');
    const result = await browser.page.evaluate(() => {
      const morph = (window as unknown as { morphForTest: (parent: Element, next: Node[]) => void }).morphForTest;
      /** Builds nodes from a small description: [tag, attributes, ...children] or a string (a text node). */
      type Spec = string | [string, Record<string, string>, ...Spec[]];
      const build = (spec: Spec): Node => {
        if (typeof spec === "string") return document.createTextNode(spec);
        const [tag, attributes, ...children] = spec;
        const el = document.createElement(tag);
        for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, v);
        for (const c of children) el.append(build(c));
        return el;
      };
      const html = (specs: Spec[]) => {
        const box = document.createElement("div");
        box.append(...specs.map(build));
        return box.innerHTML;
      };
      const steps: Spec[][] = [
        [["h2", {}, "#1 even"], ["dl", { class: "facts" }, ["dt", {}, "time"], ["dd", {}, "10:00"]], ["section", { class: "event" }, ["h3", {}, "event"], ["pre", { class: "json" }, '{"type":"TICK"}']]],
        // Texts change, the structure stays.
        [["h2", {}, "#2 odd"], ["dl", { class: "facts" }, ["dt", {}, "time"], ["dd", {}, "10:01"]], ["section", { class: "event" }, ["h3", {}, "event"], ["pre", { class: "json" }, '{"type":"TICK","n":2}']]],
        // An attribute changes, one goes, a part is added, a fact more.
        [["h2", { "data-x": "1" }, "#3 even"], ["dl", {}, ["dt", {}, "time"], ["dd", {}, "10:02"], ["dt", {}, "status"], ["dd", {}, "done"]], ["section", { class: "output" }, ["h3", {}, "output"], ["pre", { class: "json" }, "42"]], ["section", { class: "errors" }, ["h3", {}, "errors"]]],
        // A tag changes (replaced), parts go, text where an element was.
        [["p", {}, "no transition yet"], "plain text"],
        [],
        [["h2", {}, "#4 odd"]],
      ];
      const parent = document.createElement("div");
      document.body.append(parent);
      const out: { same: boolean; kept: boolean[] }[] = [];
      for (const step of steps) {
        const before = [...parent.childNodes];
        morph(parent, step.map(build));
        // Kept: a child that was there before and is the same node now (its tag matched).
        out.push({ same: parent.innerHTML === html(step), kept: [...parent.childNodes].map((n, i) => before[i] === n) });
      }
      parent.remove();
      return out;
    });
    expect(result.map((r) => r.same)).toEqual([true, true, true, true, true, true]);
    expect(result[0]!.kept).toEqual([false, false, false]);
    expect(result[1]!.kept).toEqual([true, true, true]);
    expect(result[2]!.kept).toEqual([true, true, true, false]);
    expect(result[3]!.kept).toEqual([false, false]);
    expect(result[5]!.kept).toEqual([false]);
    expect(browser.errors).toEqual([]);
  });
});
