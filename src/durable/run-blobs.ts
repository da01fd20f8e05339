import type { BlobStore } from "../record/blobs.js";
import { contentToBlobs, messagesFromBlobs, messagesToBlobs, partsFromBlobs, partsToBlobs } from "../record/blob-parts.js";
import type { ContentPart, UserContent } from "../models/content.js";
import type { Message } from "../models/messages.js";
import type { StoredCall, StoredRun } from "./run-store.js";

type Inbox = StoredRun["inbox"];

/**
 * A stored run as a file keeps it: the images and files of its request, conversation, batch results and queued
 * messages in the blob store, named by hash. The same object when it has none (most runs: nothing is copied).
 */
export function runToBlobs(run: StoredRun, blobs: BlobStore): StoredRun {
  const userInput = contentToBlobs(run.settings.userInput, blobs) as UserContent;
  const messages = messagesToBlobs(run.messages as Message[], blobs);
  const batch = mapSame(run.batch, (call) => {
    const parts = (call.result as { parts?: ContentPart[] } | undefined)?.parts;
    if (!parts) return call;
    const stored = partsToBlobs(parts, blobs);
    return stored === parts ? call : { ...call, result: { ...call.result!, parts: stored } as StoredCall["result"] };
  });
  const inbox = inboxMap(run.inbox, (content) => contentToBlobs(content, blobs) as UserContent);
  if (userInput === run.settings.userInput && messages === run.messages && batch === run.batch && inbox === run.inbox) return run;
  return { ...run, settings: { ...run.settings, userInput }, messages, batch, inbox };
}

/** A stored run as read from a file, its images and files read back from the blob store (each checked by its hash). */
export function runFromBlobs(run: StoredRun, blobs: BlobStore, where: string): StoredRun {
  const userInput = partsFromBlobs(run.settings.userInput, blobs, where);
  const messages = messagesFromBlobs(run.messages, blobs, where);
  const batch = mapSame(run.batch, (call) => {
    const parts = (call.result as { parts?: unknown } | undefined)?.parts;
    const read = partsFromBlobs(parts, blobs, where);
    return read === parts ? call : { ...call, result: { ...call.result!, parts: read } as StoredCall["result"] };
  });
  const inbox = inboxMap(run.inbox, (content) => partsFromBlobs(content, blobs, where));
  if (userInput === run.settings.userInput && messages === run.messages && batch === run.batch && inbox === run.inbox) return run;
  return { ...run, settings: { ...run.settings, userInput }, messages, batch, inbox };
}

/** The list with `f` applied; the same list when `f` changed nothing. */
function mapSame<T>(list: readonly T[], f: (item: T) => T): T[] {
  let out: T[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const item = f(list[i]);
    if (item !== list[i]) (out ??= list.slice())[i] = item;
  }
  return out ?? (list as T[]);
}

function inboxMap(inbox: Inbox, f: (content: UserContent) => UserContent): Inbox {
  const one = (messages: Inbox["steering"]) => mapSame(messages, (m) => {
    const content = f(m.content);
    return content === m.content ? m : { ...m, content };
  });
  const steering = one(inbox.steering);
  const followUp = one(inbox.followUp);
  return steering === inbox.steering && followUp === inbox.followUp ? inbox : { ...inbox, steering, followUp };
}
