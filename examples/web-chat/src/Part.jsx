// One part of a message: text, reasoning, or a tool call with its state (an approval asked shows Approve and Deny).

export function Part({ part, onAnswer }) {
  if (part.type === "text") return <p className="text">{part.text}</p>;
  if (part.type === "reasoning") return <p className="reasoning">{part.text}</p>;
  if (!part.type.startsWith("tool-")) return null;
  const name = part.type.slice("tool-".length);
  return (
    <section className="tool" data-tool={name} data-state={part.state} aria-label={`tool ${name}`}>
      <header>
        <code>{name}</code> <span className="state">{STATES[part.state] ?? part.state}</span>
      </header>
      <pre className="input">{JSON.stringify(part.input, null, 2)}</pre>
      {part.state === "approval-requested" ? (
        <div className="approval">
          <button type="button" onClick={() => onAnswer(part.approval.id, true)}>Approve</button>
          <button type="button" onClick={() => onAnswer(part.approval.id, false)}>Deny</button>
        </div>
      ) : null}
      {part.state === "output-available" ? <pre className="output">{typeof part.output === "string" ? part.output : JSON.stringify(part.output, null, 2)}</pre> : null}
      {part.state === "output-error" ? <pre className="output error">{part.errorText}</pre> : null}
    </section>
  );
}

const STATES = {
  "input-streaming": "…",
  "input-available": "running",
  "approval-requested": "waits for your approval",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "failed",
  "output-denied": "denied",
};
