// The OS sandbox around every process a run starts (docs/sandbox.md). wrap.ts (the proxy, node:http and node:net
// with it) is imported on the first sandboxed process, not with the engine.
export { resolveSandbox, DEFAULT_SANDBOX, type SandboxOption, type SandboxSettings, type SandboxMode, type SandboxNetwork, type SandboxEnv, type ResolvedSandbox } from "./settings.js";
export { scrubEnvironment, isSecretVariable, type ScrubOptions } from "./env.js";
export type { SandboxRequest, SandboxedCommand } from "./wrap.js";
export { sandboxSupport, type SandboxSupport } from "./support.js";
export { sandboxLayout, revealedTmp, PROTECTED_NAMES, HIDDEN_IN_HOME, type SandboxLayout } from "./layout.js";
export { bwrapArgs, type BwrapPlan } from "./bwrap-args.js";
export { seatbeltProfile, sbplString, type SeatbeltPlan } from "./seatbelt-profile.js";
export { hostAllowed } from "./allow-list.js";
export type { AllowListProxy, RefusedConnection } from "./proxy.js";
export { runSandbox, withRunSandbox, currentRunSandbox, type RunSandbox } from "./run-scope.js";
