import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events.js";
import { createStyle, stripAnsi } from "../../src/cli/colors.js";
import { HumanRenderer, JsonRenderer, sanitize } from "../../src/cli/render.js";
import { Capture } from "./helpers/capture.js";

const call = (id: string, name: string, input: unknown) => ({ id, name, input, sessionId: "s1" });
const usage = { input: 1200, output: 34, cached: 0, reasoning: 0 };

function clock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("JsonRenderer", () => {
  it("writes exactly one event per line and nothing else", () => {
    const out = new Capture();
    const renderer = new JsonRenderer(out);
    const events: AgentEvent[] = [
      { type: "state", state: "call_model", turn: 0 },
      { type: "text_delta", text: "hi\nthere" },
      { type: "turn_end", reason: "final_answer", sessionId: "s1", turns: 1, toolCalls: 0, usage },
    ];
    for (const e of events) renderer.event(e);
    renderer.line();
    renderer.close();
    expect(out.text.split("\n").filter(Boolean).map((l) => JSON.parse(l))).toEqual(events);
    expect(out.text.endsWith("\n")).toBe(true);
  });
});

describe("HumanRenderer", () => {
  it("streams text, prints one line per tool call and a closing line with reason, turns, tool calls, tokens and time", () => {
    const out = new Capture();
    const c = clock();
    const r = new HumanRenderer(out, { style: createStyle(false), spinner: false, thinking: false, now: c.now });
    r.event({ type: "state", state: "call_model", turn: 0 });
    r.event({ type: "text_delta", text: "Let me " });
    r.event({ type: "text_delta", text: "look." });
    r.event({ type: "tool_start", call: call("t1", "bash", { command: "npm test" }) });
    c.advance(1500);
    r.event({ type: "tool_result", call: call("t1", "bash", { command: "npm test" }), result: { content: "fail\nexit code: 1", isError: true } });
    r.event({ type: "tool_result", call: call("t2", "nope", { a: 1 }), result: { content: "unknown tool nope", isError: true } });
    r.event({ type: "tool_start", call: call("t3", "read_file", { path: "a.js" }) });
    c.advance(3);
    r.event({ type: "tool_result", call: call("t3", "read_file", { path: "a.js" }), result: { content: "1\n2\n", isError: false } });
    r.event({ type: "text_delta", text: "Done." });
    c.advance(500);
    r.event({ type: "turn_end", reason: "final_answer", sessionId: "s1", turns: 2, toolCalls: 2, usage });
    r.close();
    expect(out.text).toBe(
      [
        "Let me look.",
        "  ✓ bash npm test · exit 1 · 1.5s".replace("✓", "✗"),
        '  ✗ nope {"a":1} · unknown tool nope · not run',
        "  ✓ read_file a.js · 2 lines · 3ms",
        "Done.",
        "",
        "■ final_answer (done) · 2 turns · 2 tool calls · 1,234 tokens (1,200 in, 34 out) · 2.0s · session s1",
        "",
      ].join("\n"),
    );
  });

  it("a run that did not finish says why, with the error, on the closing lines", () => {
    const out = new Capture();
    const r = new HumanRenderer(out, { style: createStyle(false), spinner: false, thinking: false });
    r.event({
      type: "turn_end",
      reason: "max_turns",
      sessionId: "s9",
      turns: 8,
      toolCalls: 8,
      usage,
      error: { code: "MAX_TURNS", message: "stopped after 8 model calls (maxTurns)" },
    });
    expect(out.text).toContain("■ max_turns (stopped: turn limit) · 8 turns · 8 tool calls");
    expect(out.text).toContain("  error: stopped after 8 model calls (maxTurns)\n");
  });

  it("colours the closing line on a colour terminal and shows no escapes without colours", () => {
    const coloured = new Capture(true);
    new HumanRenderer(coloured, { style: createStyle(true), spinner: false, thinking: false }).event({
      type: "turn_end",
      reason: "final_answer",
      sessionId: "s",
      turns: 1,
      toolCalls: 0,
      usage,
    });
    expect(coloured.text).toContain("\u001b[32m■ final_answer\u001b[39m");
    const plain = new Capture();
    new HumanRenderer(plain, { style: createStyle(false), spinner: false, thinking: false }).event({
      type: "turn_end",
      reason: "final_answer",
      sessionId: "s",
      turns: 1,
      toolCalls: 0,
      usage,
    });
    expect(plain.text).not.toContain("\u001b");
    expect(stripAnsi(coloured.text).replace(/\d+ms/, "")).toBe(plain.text.replace(/\d+ms/, ""));
  });

  it("draws a spinner while waiting for the model and clears it before the answer", () => {
    const out = new Capture(true);
    const r = new HumanRenderer(out, { style: createStyle(false), spinner: true, thinking: false });
    r.event({ type: "state", state: "call_model", turn: 0 });
    expect(out.text).toMatch(/^\r\u001b\[2K⠋ thinking \d+ms$/);
    r.event({ type: "text_delta", text: "Hello" });
    r.close();
    // The spinner's line was cleared, then the answer written on it.
    expect(out.text).toMatch(/\r\u001b\[2KHello\n$/);
  });

  it("shows thinking only when asked, dimmed and apart from the answer", () => {
    const out = new Capture();
    const r = new HumanRenderer(out, { style: createStyle(true), spinner: false, thinking: true });
    r.event({ type: "thinking_delta", text: "hmm" });
    r.event({ type: "text_delta", text: "Answer" });
    r.close();
    expect(out.text).toBe("\u001b[2mhmm\u001b[22m\nAnswer\n");
    const hidden = new Capture();
    const h = new HumanRenderer(hidden, { style: createStyle(false), spinner: false, thinking: false });
    h.event({ type: "thinking_delta", text: "hmm" });
    h.event({ type: "text_delta", text: "Answer" });
    h.close();
    expect(hidden.text).toBe("Answer\n");
  });

  it("a retry is shown on a line of its own; the inspector's address is left to stderr (the run says it there)", () => {
    const out = new Capture();
    const r = new HumanRenderer(out, { style: createStyle(false), spinner: false, thinking: false });
    r.event({ type: "retry", attempt: 1, delayMs: 1200, error: { code: "MODEL_ERROR", message: "429 rate limited" } });
    r.event({ type: "inspector", url: "http://127.0.0.1:4000/" });
    expect(out.text).toBe("  ↻ model request failed (429 rate limited); retry 1 in 1.2s\n");
  });

  it("model text can't drive the terminal: escape sequences and carriage returns are dropped", () => {
    expect(sanitize("a\u001b[2Jb\rc\u0007\td\n")).toBe("a[2Jbc\td\n");
    const out = new Capture();
    const r = new HumanRenderer(out, { style: createStyle(false), spinner: false, thinking: false });
    r.event({ type: "text_delta", text: "x\u001b]0;pwned\u0007y" });
    expect(out.text).toBe("x]0;pwnedy");
  });
});
