import { userInputOf } from "../../models/input.js";
import { resolve } from "node:path";
import { AgentError } from "../../errors/agent-error.js";
import type { PermissionAnswer } from "../../permissions/types.js";
import { resume } from "../../resume.js";
import { fileRunStore } from "../../durable/file-run-store.js";
import { setupOutput, type CliContext } from "../context.js";
import { executeRun } from "../run-agent.js";
import { startOtelExport } from "../otel-export.js";
import { recordedModelChoice } from "../recorded-model.js";
import { UsageError } from "../usage-error.js";
import { prepareAgent } from "./prepare-agent.js";
import { runSurface } from "./run-surface.js";
import type { ResumeCommandFlags } from "./resume.js";

/** `statecraft resume <session>`: answers the run's pending calls from the flags and resumes it, rendered as `run` is. */
export async function resumeAction(session: string, flags: ResumeCommandFlags, context: CliContext): Promise<number> {
  const { io } = context;
  if (flags.allowAll && flags.denyAll) throw new UsageError("--allow-all and --deny-all can't go together.");
  const cwd = resolve(io.cwd, flags.cwd ?? ".");
  let stored;
  try {
    stored = await fileRunStore(cwd).load(session);
  } catch (error) {
    if (error instanceof AgentError) throw new UsageError(error.message);
    throw error;
  }
  if (!stored) throw new UsageError(`session ${session} has no suspended or interrupted run in ${cwd}/.agent/runs (statecraft runs lists them)`);
  const pending = stored.status === "suspended" ? stored.pending.map((c) => c.callId) : stored.batch.filter((r) => r.status === "pending").map((r) => r.call.id);
  const answers: Record<string, PermissionAnswer> = {};
  for (const id of pending) {
    if (flags.allowAll) answers[id] = "allow";
    if (flags.denyAll) answers[id] = "deny";
  }
  for (const [list, answer] of [[flags.allow, "allow"], [flags.deny, "deny"]] as const) {
    for (const id of list ?? []) {
      if (!pending.includes(id)) throw new UsageError(`${id} is not a pending call of session ${session} (pending: ${pending.join(", ") || "none"}).`);
      answers[id] = answer;
    }
  }
  const output = setupOutput(io, flags);
  // The model the run recorded (name and server), unless flags say otherwise; else as for run (flags, environment,
  // config file). The run's own limits and permission settings apply.
  const model = recordedModelChoice(flags, stored.settings, io.env, (message) => io.stderr.write(`statecraft: ${message}\n`));
  const prepared = await prepareAgent(
    { cwd, ...(flags.model ? { model: flags.model } : {}), ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}), ...(flags.trustProject ? { trustProject: true } : {}), ...(flags.sandbox ? { sandbox: flags.sandbox } : {}) },
    io,
    output.logger,
    model,
  );
  const surface = runSurface(io, output, flags.json === true);
  // "otel": true in the config: the resumed run's spans go out as the run's did (linked to its suspended span).
  const exporting = prepared.params.otel ? await startOtelExport() : undefined;
  const outcome = await executeRun({
    prompt: userInputOf(stored.settings.userInput),
    params: { ...prepared.params, sessionId: session },
    model: prepared.created.model,
    tools: prepared.tools,
    ...surface.options,
    // Unanswered calls with no terminal to ask suspend again rather than being denied.
    onAsk: "suspend",
    start: (options) =>
      resume(session, {
        model: options.model,
        ...(options.tools ? { tools: options.tools } : {}),
        cwd,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
        ...(exporting ? { observers: [exporting.observer] } : {}),
        ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
        permissions: { whenUnanswered: "suspend", ...(options.permissions?.onAsk ? { onAsk: options.permissions.onAsk } : {}) },
        answers,
        answeredBy: `statecraft resume (pid ${process.pid})`,
      }),
  })
    .catch((error: unknown) => {
      // Another process took the run meanwhile, or its file went bad: said like any other bad input.
      if (error instanceof AgentError && (error.code === "RUN_BUSY" || error.code === "RUN_NOT_FOUND" || error.code === "RUN_DAMAGED")) throw new UsageError(error.message);
      throw error;
    })
    .finally(async () => {
      surface.close();
      await exporting?.shutdown().catch((error: Error) => io.stderr.write(`statecraft: sending spans failed: ${error.message}\n`));
    });
  return outcome.exitCode;
}
