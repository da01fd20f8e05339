import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** How a test host answers a permission question: the elicitation's action and, on accept, the decision. */
export type HostAnswer = { action: "accept"; decision: "allow" | "deny" } | { action: "decline" } | undefined;

/** What a test asks of a host, whichever SDK generation it is built on. */
export interface TestHost {
  protocol(): string | undefined;
  callTool(args: Record<string, unknown>, options?: { signal?: AbortSignal; onprogress?: (p: { progress: number; message?: string }) => void }): Promise<Record<string, unknown>>;
  listResources(): Promise<Array<{ uri: string }>>;
  readResource(uri: string): Promise<{ text: string; mimeType?: string }>;
  /** The questions it was asked. */
  asked: string[];
  close(): Promise<void>;
}

export interface HostOptions {
  /** Declare elicitation and answer each question so; undefined: no elicitation capability at all. */
  answer?: HostAnswer;
  toolName?: string;
}

const TOOL = "run_agent";

/** A host on SDK v2 (`@modelcontextprotocol/client` 2.4.0) speaking 2026-07-28, over the transport given. */
export async function modernHost(transport: ConstructorParameters<typeof V2HttpTransport> | { transport: unknown }, options: HostOptions = {}): Promise<TestHost> {
  const asked: string[] = [];
  const client = new V2Client({ name: "test-host-v2", version: "2.4.0" }, { capabilities: options.answer ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  if (options.answer) {
    const answer = options.answer;
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      return answer.action === "accept" ? { action: "accept", content: { decision: answer.decision } } : { action: answer.action };
    });
  }
  const t = "transport" in transport ? transport.transport : new V2HttpTransport(...(transport as ConstructorParameters<typeof V2HttpTransport>));
  await client.connect(t as never);
  return {
    protocol: () => client.getNegotiatedProtocolVersion(),
    async callTool(args, callOptions = {}) {
      return (await client.callTool(
        { name: options.toolName ?? TOOL, arguments: args },
        { ...(callOptions.signal ? { signal: callOptions.signal } : {}), ...(callOptions.onprogress ? { onprogress: callOptions.onprogress } : {}), timeout: 60_000 },
      )) as Record<string, unknown>;
    },
    listResources: async () => (await client.listResources()).resources,
    async readResource(uri) {
      const content = (await client.readResource({ uri })).contents[0] as { text: string; mimeType?: string };
      return content;
    },
    asked,
    close: () => client.close(),
  };
}

/** A host on SDK 1.32.2 (`@modelcontextprotocol/sdk`) speaking 2025-11-25 with `initialize`. */
export async function legacyHost(transport: ConstructorParameters<typeof V1HttpTransport> | { transport: unknown }, options: HostOptions = {}): Promise<TestHost> {
  const asked: string[] = [];
  const client = new V1Client({ name: "test-host-v1", version: "1.32.2" }, { capabilities: options.answer ? { elicitation: { form: {} } } : {} });
  if (options.answer) {
    const answer = options.answer;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return answer.action === "accept" ? { action: "accept", content: { decision: answer.decision } } : { action: answer.action };
    });
  }
  const t = "transport" in transport ? transport.transport : new V1HttpTransport(...(transport as ConstructorParameters<typeof V1HttpTransport>));
  await client.connect(t as never);
  return {
    protocol: () => (t as { protocolVersion?: string }).protocolVersion ?? client.getServerVersion()?.version,
    async callTool(args, callOptions = {}) {
      return (await client.callTool({ name: options.toolName ?? TOOL, arguments: args }, undefined, {
        ...(callOptions.signal ? { signal: callOptions.signal } : {}),
        ...(callOptions.onprogress ? { onprogress: callOptions.onprogress } : {}),
        timeout: 60_000,
      })) as Record<string, unknown>;
    },
    listResources: async () => (await client.listResources()).resources,
    async readResource(uri) {
      return (await client.readResource({ uri })).contents[0] as { text: string; mimeType?: string };
    },
    asked,
    close: () => client.close(),
  };
}
