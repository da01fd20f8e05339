import { isDeepStrictEqual } from "node:util";
import type { PermissionMode, PermissionPolicy, PermissionRequest, PolicyVerdict } from "../permissions/types.js";
import type { RecordedBatch, RecordedCall } from "./recording.js";
import type { ReplayShared } from "./replay-shared.js";
import { excerpt } from "./timeline.js";

/** The stand-in permission policy and person of a replay: each call gets the decision the recording shows. */
export class RecordedPermissions {
  private readonly decided = new Set<RecordedCall>();
  private lastDecided?: RecordedCall;

  constructor(private readonly r: ReplayShared) {}

  /** A policy that gives each call the recorded verdict; calls a person decided are asked (and answered by `answer`). */
  policy(): PermissionPolicy {
    return {
      mode: this.r.options.permissions.mode as PermissionMode,
      // Recorded verdicts need no parsing.
      ready: Promise.resolve(),
      sessionRules: [],
      evaluate: (tool, input) => this.verdict(tool.name, input),
      rememberAllow: (tool) => this.lastDecided?.permission?.rule ?? tool.name,
      // The recorded verdicts already account for the session's rules.
      addSessionRules: () => undefined,
    };
  }

  /** The stand-in person: answers what was answered; a question the run stopped during is never answered. */
  async answer(request: PermissionRequest): Promise<"allow" | "deny" | "allow_always"> {
    const call = this.lastDecided;
    if (call?.permission?.by === "human" && call.name === request.call.name) return call.permission.decision;
    await this.r.stops.hang();
    return "deny";
  }

  private verdict(name: string, input: unknown): PolicyVerdict {
    const { notes, stops } = this.r;
    const batch = this.currentBatch();
    const call = batch?.calls.find((c) => !this.decided.has(c) && c.permission && c.name === name && isDeepStrictEqual(c.permission.input ?? c.input, input));
    if (!call?.permission) {
      // The line with the decision may be missing (a damaged trace); a call that ran to a result was allowed.
      const ran = batch?.calls.find((c) => !this.decided.has(c) && c.name === name && c.result?.durationMs !== undefined && (!c.hasInput || isDeepStrictEqual(c.input, input)));
      if (ran) {
        this.decided.add(ran);
        this.lastDecided = ran;
        notes.push(`the decision for ${name} is not in the recording; it ran, so the replay allows it`);
        return { kind: "allow", by: "mode" };
      }
      this.lastDecided = undefined;
      if (stops.plan?.style === "event" && stops.plan.batch === batch) return { kind: "ask", reason: "the run stopped before this call was decided" };
      notes.push(`the replay asked about ${name} ${excerpt(JSON.stringify(input) ?? "")}, which the recording never decided`);
      return { kind: "deny", by: "mode", reason: "replay: the recording has no decision for this call" };
    }
    this.decided.add(call);
    this.lastDecided = call;
    const p = call.permission;
    if (p.by === "human") return { kind: "ask", reason: "a person was asked" };
    if (p.by === "default") return { kind: "ask", reason: deniedReason(call).replace(/, and no one could be asked \(no permissions\.onAsk\)$/, "") };
    const by = p.by === "rule" ? "rule" : "mode";
    if (p.decision === "deny") return { kind: "deny", by, reason: deniedReason(call), ...(p.rule !== undefined ? { rule: p.rule } : {}) };
    return { kind: "allow", by, ...(p.rule !== undefined ? { rule: p.rule } : {}) };
  }

  private currentBatch(): RecordedBatch | undefined {
    return this.r.recording.batches.find((b) => b.callIndex === this.r.recorder.modelCallIndex);
  }
}

/** The reason a recorded deny gave, read back from the call's result ("Permission denied: <reason>. <tool> was not run."). */
function deniedReason(call: RecordedCall): string {
  const content = call.result?.content ?? "";
  const match = /^Permission denied: ([\s\S]*)\. \S+ was not run\.$/.exec(content);
  return match ? match[1] : content || "denied";
}
