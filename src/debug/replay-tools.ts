import { isDeepStrictEqual } from "node:util";
import { AgentError } from "../errors/agent-error.js";
import { defineTool, type AnyTool, type ToolContext, type ToolOutput } from "../tools/define-tool.js";
import type { ReplayShared } from "./replay-shared.js";
import { partsFromBlobs } from "../record/blob-parts.js";
import type { ContentPartInput } from "../models/content.js";
import { excerpt } from "./timeline.js";

/** The stand-in tools of a replay: the recorded tools' definitions, each call answered with its recorded result. */
export class RecordedTools {
  constructor(private readonly r: ReplayShared) {}

  /** The recorded tools rebuilt, or why one can't be. */
  tools(): AnyTool[] | { failure: string } {
    const tools: AnyTool[] = [];
    for (const t of this.r.options.tools) {
      try {
        tools.push(
          defineTool({
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema,
            risk: t.risk,
            executionMode: t.executionMode,
            maxOutputChars: Number.MAX_SAFE_INTEGER,
            execute: (input: unknown, context: ToolContext) => this.play(t.name, input, context),
          }),
        );
      } catch (error) {
        return { failure: `the recorded tool ${t.name} can't be rebuilt: ${(error as Error).message}` };
      }
    }
    return tools;
  }

  private async play(name: string, input: unknown, context: ToolContext): Promise<ToolOutput> {
    const { recording, recorder, notes, stops } = this.r;
    const where = recorder.calls.get(context.toolCallId);
    const batch = where ? recording.batches.find((b) => b.callIndex === where.callIndex) : undefined;
    const recorded = where ? batch?.calls[where.position] : undefined;
    const shown = `${name} ${excerpt(JSON.stringify(input) ?? "")}`;
    if (!recorded) {
      notes.push(`the replay ran ${shown}, which the recording never ran`);
      return { content: `replay: the recording has no result for ${shown}`, isError: true };
    }
    if (recorded.name !== name || (recorded.hasInput && !isDeepStrictEqual(recorded.permission?.input ?? recorded.input, input))) {
      notes.push(`the replay ran ${shown} where the recording ran ${recorded.name} ${excerpt(JSON.stringify(recorded.input) ?? "")}`);
      return { content: `replay: the recording has no result for ${shown}`, isError: true };
    }
    const result = recorded.result;
    // A call a crash interrupted gave what the recovered run told the model it gave.
    if (result && (result.durationMs !== undefined || result.interrupted)) {
      if (result.error) throw new AgentError(result.error.code, result.error.message, result.error.status !== undefined ? { status: result.error.status } : {});
      // An image the tool returned: its bytes read back from the blob the line names.
      const content = result.parts ? (partsFromBlobs(result.parts, this.r.blobs, `the result of ${name} (seq ${result.seq})`) as ContentPartInput[]) : result.content;
      return { content, isError: result.isError, ...(result.details ? { details: result.details } : {}) };
    }
    if (recorded.ran && stops.plan?.style === "event" && stops.plan.batch === batch) return stops.hang(context.signal);
    notes.push(`the recording has no result of ${shown} (seq ${batch?.seq})`);
    return { content: `replay: the recording has no result for ${shown}`, isError: true };
  }
}
