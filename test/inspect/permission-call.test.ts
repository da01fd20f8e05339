import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_SHOWN_CALL_CHARS, shownCall } from "../../src/inspect/permission-call.js";
import type { InspectorRecord } from "../../src/inspect/protocol.js";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { isProblem, pageClient, pageToken } from "./support/clients.js";

type PermissionRecord = Extract<InspectorRecord, { kind: "permission" }>;

/** A command that looks harmless for its first screens and ends in what it is really for. */
const longCommand = (length: number) => {
  const tail = " ; rm -rf ~";
  return `echo ${"a".repeat(length - tail.length - 5)}${tail}`;
};

const nested = (levels: number): unknown => (levels === 0 ? "rm -rf ~" : { next: nested(levels - 1) });

describe("a permission request's call, as the page is sent it", () => {
  it("is sent whole when it fits, however long its strings (other records cut them at 20 000 characters)", () => {
    for (const length of [20_001, 50_000, 400_000]) {
      const command = longCommand(length);
      expect(command).toHaveLength(length);
      const shown = shownCall({ id: "c", name: "bash", input: { command } });
      expect(shown.whole, `${length}`).toBe(true);
      expect((shown.call as { input: { command: string } }).input.command).toBe(command);
    }
    const many = { id: "c", name: "write_files", input: { files: Array.from({ length: 2000 }, (_, i) => ({ path: `f${i}`, text: "x" })) } };
    expect(shownCall(many)).toMatchObject({ whole: true, call: many });
  });

  it("is marked as not to be allowed from the page when the page cannot show it whole, saying why", () => {
    const payloads: Array<[string, unknown, RegExp]> = [
      ["a command longer than the page shows", { input: { command: longCommand(MAX_SHOWN_CALL_CHARS + 10) } }, /characters of JSON and the page shows at most 1000000 whole/],
      ["many strings that add up past it", { input: { lines: Array.from({ length: 600 }, () => "b".repeat(2000)).concat(["rm -rf ~"]) } }, /was cut/],
      ["nesting deeper than the page shows", { input: nested(80) }, /nests deeper than 64 levels/],
      ["a class instance", { input: { command: new (class Command {})() } }, /not plain data/],
      ["a map", { input: { env: new Map([["PATH", "/tmp/evil"]]) } }, /not plain data/],
      ["a function", { input: { run: () => "rm -rf ~" } }, /function, which the page can only name/],
      ["a number JSON cannot carry", { input: { count: Number.NaN } }, /NaN/],
      ["a bigint", { input: { size: 10n } }, /bigint/],
      ["something with its own toJSON", { input: { command: { toJSON: () => "ls" } } }, /not plain data/],
    ];
    for (const [name, call, why] of payloads) {
      const shown = shownCall(call);
      expect(shown.whole, name).toBe(false);
      expect(shown.why, name).toMatch(why);
    }
  });
});

describe("inspector: Allow from the page only for what the page was sent whole", () => {
  let inspector: Inspector;
  beforeEach(async () => {
    inspector = await startInspector();
  });
  afterEach(async () => {
    await inspector.close();
  });

  it("sends a 50 000-character command whole, and the page may allow it", async () => {
    const page = await pageClient(inspector.port);
    const command = longCommand(50_000);
    const answer = inspector.requestPermission({ call: { id: "c1", name: "bash", input: { command } }, reason: "bash is an exec tool" });
    const asked = (await page.next((r) => r.kind === "permission")) as PermissionRecord;
    expect(asked.whole).toBe(true);
    expect((asked.call as { input: { command: string } }).input.command).toBe(command);
    expect(command.endsWith("rm -rf ~")).toBe(true);
    page.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "allow", token: await pageToken(inspector.port) }));
    await expect(answer).resolves.toBe("allow");
    page.ws.close();
  });

  it("refuses an Allow from the page, token and all, for a call it could not send whole; Deny still works", async () => {
    const page = await pageClient(inspector.port);
    const token = await pageToken(inspector.port);
    const calls = [
      { id: "big", name: "bash", input: { command: longCommand(MAX_SHOWN_CALL_CHARS + 1000) } },
      { id: "deep", name: "bash", input: nested(70) },
    ];
    for (const call of calls) {
      const answer = inspector.requestPermission({ call, reason: "exec" });
      const asked = (await page.next((r) => r.kind === "permission" && (r.call as { id?: string }).id === call.id)) as PermissionRecord;
      expect(asked.whole).toBe(false);
      expect(asked.unshown).toBeTruthy();
      // What the page got is cut: the tail that matters is not in it.
      expect(JSON.stringify(asked.call)).not.toContain("rm -rf ~");
      page.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "allow", token }));
      const refused = await page.next((r) => isProblem(r) && r.message.includes(`permission request ${asked.id} cannot be allowed from the page`));
      expect((refused as { message: string }).message).toContain("answer it in the terminal");
      expect(page.records.some((r) => r.kind === "permission_answer" && r.id === asked.id)).toBe(false);
      page.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "deny", token }));
      await expect(answer).resolves.toBe("deny");
    }
    page.ws.close();
  });

  it("leaves the terminal free to allow what the page cannot: withdrawing still works", async () => {
    const page = await pageClient(inspector.port);
    const controller = new AbortController();
    const fromPage = inspector.requestPermission({ call: { id: "big", name: "bash", input: { command: longCommand(MAX_SHOWN_CALL_CHARS + 1) } }, reason: "exec" }, { signal: controller.signal });
    const asked = (await page.next((r) => r.kind === "permission")) as PermissionRecord;
    controller.abort(new Error("allowed in the terminal"));
    await expect(fromPage).rejects.toThrow("allowed in the terminal");
    await page.next((r) => r.kind === "permission_answer" && r.id === asked.id && r.by === "elsewhere");
    page.ws.close();
  });
});
