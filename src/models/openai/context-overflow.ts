/**
 * Whether a server's error says the conversation no longer fits the model's context window. Compaction relies on
 * this (error code `CONTEXT_OVERFLOW`), so it recognises the codes and messages of the servers people run.
 */
const OVERFLOW_CODES = new Set(["context_length_exceeded", "exceed_context_size_error", "context_window_exceeded", "string_above_max_length"]);

const OVERFLOW_MESSAGES: readonly RegExp[] = [
  /maximum context length/i, // OpenAI, DeepSeek, vLLM, OpenRouter, Groq, Together
  /context[_ ]length[_ ]exceeded/i,
  /context window/i, // "exceeds the context window", "input exceeds the context window of this model"
  /exceeds? the (available )?context size/i, // llama.cpp server
  /context size has been exceeded/i, // LM Studio
  /longer than the model'?s context length/i, // vLLM
  /prompt is too long/i, // Anthropic-compatible endpoints
  /input token count .* exceeds the maximum/i, // Gemini
  /maximum prompt length/i, // xAI
  /too large for model with \d+ maximum context length/i, // Mistral
  /`?inputs`? tokens \+ `?max_new_tokens`? must be <=/i, // TGI, Together
  /reduce the length of the messages/i, // Groq, Cerebras
  /input is too long/i, // Bedrock-backed endpoints
  /requested \d+ tokens.*(?:context|maximum)/i,
];

export function isContextOverflow(code: unknown, type: unknown, message: string): boolean {
  if (typeof code === "string" && OVERFLOW_CODES.has(code)) return true;
  if (typeof type === "string" && OVERFLOW_CODES.has(type)) return true;
  return OVERFLOW_MESSAGES.some((pattern) => pattern.test(message));
}
