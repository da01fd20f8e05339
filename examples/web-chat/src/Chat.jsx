import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useEffect, useMemo, useState } from "react";
import { chatId, loadMessages, saveMessages } from "./chat-store.js";
import { Part } from "./Part.jsx";

export function Chat() {
  const id = useMemo(chatId, []);
  const initial = useMemo(() => loadMessages(id), [id]);
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id,
    messages: initial,
    transport: new DefaultChatTransport({ api: "/api/chat" }),
    // After a reload: the run still going on streams in again (GET /api/chat/:id/stream).
    resume: true,
    // An approval answered: the next request carries it, and the run goes on.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  useEffect(() => saveMessages(id, messages, status), [id, messages, status]);

  const submit = (event) => {
    event.preventDefault();
    if (input.trim() === "") return;
    sendMessage({ text: input });
    setInput("");
  };

  return (
    <main className="chat" data-status={status}>
      <h1>statecraft chat</h1>
      <ol className="messages" aria-label="messages">
        {messages.map((message) => (
          <li key={message.id} className={`message ${message.role}`} data-role={message.role}>
            {message.parts.map((part, i) => (
              <Part key={i} part={part} onAnswer={(approvalId, approved) => addToolApprovalResponse({ id: approvalId, approved })} />
            ))}
          </li>
        ))}
      </ol>
      {error ? <p role="alert" className="error">{error.message}</p> : null}
      <form onSubmit={submit}>
        <input aria-label="message" value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask the agent…" disabled={status !== "ready"} />
        <button type="submit" disabled={status !== "ready"}>Send</button>
      </form>
    </main>
  );
}
