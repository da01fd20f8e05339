import type { PermissionAnswer, PermissionRequest } from "../permissions/types.js";
import { DEMO_TEST_COMMAND } from "./workspace.js";

export interface DemoDecision {
  answer: PermissionAnswer;
  /** What the demo says on screen about its answer. */
  why: string;
}

/**
 * The demo answers its own permission requests, so it runs without anyone at the keyboard: it allows file edits (the
 * file tools keep them inside the demo's copy) and `bash` running exactly the sample's test command; anything else
 * is denied.
 */
export function demoDecision(request: PermissionRequest): DemoDecision {
  const { name, input } = request.call;
  const fields = input !== null && typeof input === "object" ? (input as Record<string, unknown>) : {};
  if (name === "edit_file" || name === "write_file") {
    return { answer: "allow", why: "file edits stay inside the demo's copy" };
  }
  if (name === "bash" && fields.command === DEMO_TEST_COMMAND) {
    return { answer: "allow", why: "it is the sample's test command" };
  }
  return { answer: "deny", why: "the demo allows only file edits and the sample's test command" };
}
