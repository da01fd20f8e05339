import type { AskAnswer, PermissionOptions } from "../permissions/types.js";
import type { InspectedRun } from "./run.js";
import type { Inspector } from "./server.js";

/** The reason a question withdrawn from `onAsk` carries when the inspector's page answered it first. */
export class AnsweredOnPage extends Error {
  constructor(readonly answer: "allow" | "deny") {
    super(`answered on the inspector's page: ${answer === "allow" ? "allowed" : "denied"}`);
    this.name = "AnsweredOnPage";
  }
}

/** The reason a question withdrawn from the pages carries when `onAsk` (the terminal) answered it first. */
const ANSWERED_BY_ONASK = new Error("answered by onAsk (the terminal) first");

/**
 * A permission question goes to the inspector's pages too. With `onAsk` (the terminal) it is put to the pages
 * whether one is connected or not, so a page opened or reloaded while it waits shows it with Allow and Deny; the
 * first answer, page or `onAsk`, wins, and the other question is withdrawn with a reason saying who answered. With no
 * `onAsk`, a connected page is asked (denied when none stays connected); with no page either, what `whenUnanswered`
 * says, as without the inspector.
 */
export function askThroughInspector(permissions: PermissionOptions, inspector: Inspector, inspected: InspectedRun): PermissionOptions {
  const terminal = permissions.onAsk;
  return {
    ...permissions,
    onAsk: async (request) => {
      if (!terminal && inspector.pages === 0) return permissions.whenUnanswered === "suspend" ? "suspend" : "deny";
      const answered = new AbortController();
      const withdraw = request.signal ? AbortSignal.any([request.signal, answered.signal]) : answered.signal;
      const fromPage = inspected.requestPermission(request, { signal: withdraw, askedElsewhere: terminal !== undefined });
      if (!terminal) {
        try {
          return await fromPage;
        } finally {
          answered.abort();
        }
      }
      const onPage = fromPage.then((answer) => ({ answer, page: true as const }));
      const inTerminal = Promise.resolve(terminal({ ...request, signal: withdraw })).then((answer) => ({ answer, page: false as const }));
      let winner: { answer: AskAnswer | (string & {}); page: boolean } | undefined;
      try {
        winner = await Promise.race([onPage, inTerminal]);
        return winner.answer;
      } finally {
        answered.abort(winner?.page ? new AnsweredOnPage(winner.answer === "allow" ? "allow" : "deny") : ANSWERED_BY_ONASK);
        onPage.catch(() => undefined);
        inTerminal.catch(() => undefined);
      }
    },
  };
}
