import { expect, it } from "vitest";
import { decode, encode } from "../../src/dbos/codec.js";
import { AgentError } from "../../src/index.js";

it("keeps an AgentError an AgentError through a step's record, code and all", () => {
  const error = new AgentError("INTERRUPTED", "it stopped", { status: 503, retryable: true, data: { call: "c1" } });
  const back = decode<{ ok: boolean; error: AgentError; reports: Array<{ error: AgentError }> }>(encode({ ok: false, error, reports: [{ error }] }));
  for (const e of [back.error, back.reports[0].error]) {
    expect(e).toBeInstanceOf(AgentError);
    expect(e).toMatchObject({ code: "INTERRUPTED", message: "it stopped", status: 503, retryable: true, data: { call: "c1" } });
  }
  // A plain Error gets the tool failure code, its message kept.
  expect(decode<Error>(encode(new Error("boom")))).toMatchObject({ code: "TOOL_FAILED", message: "boom" });
  expect(decode(encode({ text: "x", n: [1, 2] }))).toEqual({ text: "x", n: [1, 2] });
});
