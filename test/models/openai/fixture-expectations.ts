import type { Usage } from "../../../src/models/model.js";

/**
 * What each recorded response in test/fixtures/openai-wire/ must come out as, read off the fixture files by hand:
 * exact text, reasoning, tool calls (names, parsed arguments, server ids), finish reason and usage, or the error.
 */

export interface Expected {
  text: string;
  thinking?: string | { length: number; start: string; end: string };
  calls: { name: string; args: unknown; providerId?: string }[];
  finishReason: string;
  usage?: Usage;
  metadata?: Record<string, unknown>;
}

export interface ExpectedError {
  error: { code: string; status?: number; retryable: boolean; messageIncludes: string };
  thinking: string | { length: number; start: string; end: string };
}

const GROQ_THINKING = 'We need to call the function with correct parameter "name". Provide a name, e.g., "example".';
const DEEPSEEK_THINKING =
  'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".';
const OLLAMA_REASONING =
  'The conversation: user asked "What is the capital of France?" assistant responded "Paris." That is fine. But they expect a JSON output? They saw a validation error: "Expected JSON: invalid JSON." The system is set up such that the assistant must respond using the function "final_result" JSON object with keys city and country. The previous response was not JSON; that\'s why validator error. So we must call function final_result with city = "Paris" and country = "France". We need to produce JSON accordingly. The function signature: final_result({city: string, country: string}). We need to output the JSON. Using the functions interface. Let\'s produce: { "city": "Paris", "country": "France" } as JSON.\n\nWe need to provide answer in JSON format. Let\'s do that.';
const GEMINI_SIGNATURE =
  "AVSoXO4AzAXs7GGvOY63fp8CwJK3yR8HbUPhxhfN2HaPvJnscmZCkaWvckz5NL3nIMK+si/baQcsM2Q8ME9V1RQrb3w1IKceWfjO3kHPL11odY/p6Us4GkkvJqKU/OgUnbAMbuvNdX1pyXWZUrQ7WyXZ5F4mjbxBSCLiVOTdFlK53zn+ajq5JIuG9AYHgwE/sJxUUpvNd6RcWvZR3fQb8gufjCspiO2ZdInRcdGsz/+XftFHxFbXkdtCRAw74AtjlN5osb+KgDYojdohKIEit9DcTBe7hI7oEHWMfnqYSgGrrad4FJpNB3jXmSFevE2iYYKUBzWvxJNj8fIYrCC0g4rJ1aJvuoU=";

export const EXPECTED: Record<string, Expected | ExpectedError> = {
  "openai-python-finish-length": { text: '{"', calls: [], finishReason: "length", usage: { input: 79, output: 1, reasoning: 0 } },
  "openai-python-parallel-tool-calls": {
    text: "",
    calls: [
      { name: "GetWeatherArgs", args: { city: "Edinburgh", country: "GB", units: "c" }, providerId: "call_JMW1whyEaYG438VE1OIflxA2" },
      { name: "get_stock_price", args: { ticker: "AAPL", exchange: "NASDAQ" }, providerId: "call_DNYTawLBoN8fj3KN6qU9N1Ou" },
    ],
    finishReason: "tool_calls",
    usage: { input: 149, output: 60, reasoning: 0 },
  },
  "openai-python-refusal": {
    text: "I'm sorry, I can't assist with that request.",
    calls: [],
    finishReason: "stop",
    usage: { input: 79, output: 11, reasoning: 0 },
    metadata: { refusal: "I'm sorry, I can't assist with that request." },
  },
  "openai-python-single-tool-call": {
    text: "",
    calls: [{ name: "GetWeatherArgs", args: { city: "Edinburgh", country: "UK", units: "c" }, providerId: "call_c91SqDXlYFuETYv8mUHzz6pp" }],
    finishReason: "tool_calls",
    usage: { input: 76, output: 24, reasoning: 0 },
  },
  "openai-python-strict-tool-call": {
    text: "",
    calls: [{ name: "get_weather", args: { city: "San Francisco", state: "CA" }, providerId: "call_CTf1nWJLqSeRgDqaCG27xZ74" }],
    finishReason: "tool_calls",
    usage: { input: 48, output: 19, reasoning: 0 },
  },
  "pydantic-ai-groq-gpt-oss-midstream-error-event": {
    error: { code: "MODEL_ERROR", status: 400, retryable: false, messageIncludes: "Tool call validation failed" },
    thinking: {
      length: 412,
      start: "We need to call the tool with invalid parameters first",
      end: 'Then second call with name: "test". Let\'s do that.',
    },
  },
  "pydantic-ai-groq-gpt-oss-tool-call-single-delta": {
    text: "",
    thinking: GROQ_THINKING,
    calls: [{ name: "get_something_by_name", args: { name: "example" }, providerId: "fc_bfb39741-3748-4def-9886-a93fc9c64a90" }],
    finishReason: "tool_calls",
    usage: { input: 304, output: 49, reasoning: 23 },
    metadata: { reasoningField: "reasoning" },
  },
  "pydantic-ai-openai-gpt4o-mini-tool-call-obfuscation": {
    text: "",
    calls: [{ name: "get_capital", args: { country: "UK" }, providerId: "call_ZR5UUuTt3pf61kjwAJIYdVMj" }],
    finishReason: "tool_calls",
    usage: { input: 53, output: 15, cached: 0, reasoning: 0 },
  },
  "pydantic-ai-openai-gpt5-trailing-moderation-chunk": {
    text: "Paris.",
    calls: [],
    finishReason: "stop",
    usage: { input: 13, output: 11, cached: 0, reasoning: 0 },
  },
  "pydantic-ai-openrouter-minimax-error-in-chunk": {
    error: { code: "MODEL_ERROR", status: 400, retryable: false, messageIncludes: "Token limit reached" },
    // `reasoning` and `reasoning_details` carry the same text: it must appear once.
    thinking: "We need to respond to a greeting. The user",
  },
  "pydantic-ai-snowflake-claude-no-finish-reason": {
    text: "15 × 27 = **405**\n\nHere's the breakdown:\n- 15 × 20 = 300\n- 15 × 7 = 105\n- 300 + 105 = **405**",
    thinking: "15 * 27 = 405",
    calls: [],
    finishReason: "stop",
    usage: { input: 45, output: 73, cached: 0, reasoning: 0 },
    metadata: { reasoningField: "reasoning_details" },
  },
  "pydantic-ai-zai-glm47-reasoning-content": {
    text: "4",
    thinking: {
      length: 2173,
      start: "\n1.  **Analyze the User's Request:** The user is asking a ve",
      end: 'tra fluff is needed.\n\n7.  **Draft the final response:** "4".',
    },
    calls: [],
    finishReason: "stop",
    usage: { input: 13, output: 564, cached: 0, reasoning: 561 },
    metadata: { reasoningField: "reasoning_content" },
  },
  "tgi-llama31-tool-call-id0-no-finish": {
    text: "",
    calls: [{ name: "get_current_weather", args: { location: "Brooklyn, NY", format: "fahrenheit" }, providerId: "0" }],
    finishReason: "tool_calls",
  },
  "vercel-alibaba-qwen-tool-call-empty-id": {
    text: "",
    calls: [{ name: "weather", args: { location: "San Francisco" }, providerId: "call_eee11723464a4b9eb8cee71d" }],
    finishReason: "tool_calls",
    usage: { input: 295, output: 22, cached: 0 },
  },
  "vercel-anthropic-compat-tool-index1": {
    text: "Reading it.",
    calls: [{ name: "read_file", args: { path: "a.txt" }, providerId: "toolu_sanitized" }],
    finishReason: "tool_calls",
  },
  "vercel-azure-choice-without-delta": {
    text: "Hello World",
    calls: [],
    finishReason: "stop",
    usage: { input: 15, output: 5, cached: 0, reasoning: 0 },
  },
  "vercel-azure-empty-first-chunk-filter": {
    text: "Capital of Denmark.",
    calls: [],
    finishReason: "stop",
    usage: { input: 15, output: 78, cached: 0, reasoning: 64 },
  },
  "vercel-deepseek-reasoner-tool-call": {
    text: "",
    thinking: DEEPSEEK_THINKING,
    calls: [{ name: "weather", args: { location: "San Francisco" }, providerId: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF" }],
    finishReason: "tool_calls",
    usage: { input: 339, output: 83, cached: 320, reasoning: 39 },
    metadata: { reasoningField: "reasoning_content" },
  },
  "vercel-groq-tool-call-whole-args": {
    text: "",
    calls: [{ name: "weather", args: {}, providerId: "tk85n1k4m" }],
    finishReason: "tool_calls",
    usage: { input: 210, output: 15 },
  },
  "vercel-mistral-glm-empty-name-continuation": {
    text: "",
    calls: [{ name: "webSearchTool", args: { query: "current Berlin weather" }, providerId: "chatcmpl-tool-9f149c74c42f265b" }],
    finishReason: "tool_calls",
    usage: { input: 171, output: 14, cached: 128 },
  },
  "vercel-mistral-tool-call-no-index": {
    text: "",
    calls: [{ name: "weather", args: { location: "San Francisco" }, providerId: "gSIMJiOkT" }],
    finishReason: "tool_calls",
    usage: { input: 124, output: 22 },
  },
  "vercel-openai-after-tool-result-stop": {
    text: "POST_TOOL",
    calls: [],
    finishReason: "stop",
    usage: { input: 86, output: 2, cached: 0, reasoning: 0 },
  },
  "vercel-openai-text-then-tool-call": {
    text: "PRE_TOOL",
    calls: [{ name: "weather", args: {}, providerId: "call_NZa7xqfefoaMI2YYHowVXVlU" }],
    finishReason: "tool_calls",
    usage: { input: 58, output: 12, cached: 0, reasoning: 0 },
  },
  "vercel-vllm-llama31-usage-every-chunk-trailing-empty-args": {
    text: "",
    calls: [{ name: "searchGoogle", args: { query: "latest news on ai" }, providerId: "chatcmpl-tool-b3b307239370432d9910d4b79b4dbbaa" }],
    finishReason: "tool_calls",
    // The last of the per-chunk usages, not their sum.
    usage: { input: 226, output: 20 },
  },
  "vercel-xai-grok-tool-call": {
    text: "",
    thinking: "First, the user is",
    calls: [{ name: "weather", args: { location: "San Francisco" }, providerId: "call_55117580" }],
    finishReason: "tool_calls",
    usage: { input: 291, output: 26, cached: 290, reasoning: 196 },
    metadata: { reasoningField: "reasoning_content" },
  },

  // Whole (non-streaming) bodies: servers that ignore `stream: true`.
  "openai-python-nonstream-parse-multiple-pydantic-tools": {
    text: "",
    calls: [
      { name: "GetWeatherArgs", args: { city: "Edinburgh", country: "GB", units: "c" }, providerId: "call_fdNz3vOBKYgOIpMdWotB9MjY" },
      { name: "get_stock_price", args: { ticker: "AAPL", exchange: "NASDAQ" }, providerId: "call_h1DWI1POMJLb0KwIyQHWXD4p" },
    ],
    finishReason: "tool_calls",
    usage: { input: 149, output: 60, reasoning: 0 },
  },
  "openai-python-nonstream-parse-strict-tools": {
    text: "",
    calls: [{ name: "get_weather", args: { city: "San Francisco", state: "CA" }, providerId: "call_CUdUoJpsWWVdxXntucvnol1M" }],
    finishReason: "tool_calls",
    usage: { input: 48, output: 19, reasoning: 0 },
  },
  "pydantic-ai-crusoe-vllm-glm-tool-call": {
    text: "",
    thinking: 'The user wants to know the weather in Paris. I\'ll call the get_weather function with "Paris" as the city.',
    calls: [{ name: "get_weather", args: { city: "Paris" }, providerId: "chatcmpl-tool-bbb91941bf76335c" }],
    finishReason: "tool_calls",
    usage: { input: 167, output: 37, cached: 0, reasoning: 25 },
    metadata: { reasoningField: "reasoning" },
  },
  "pydantic-ai-gemini-openai-compat-empty-tool-id": {
    text: "",
    // id "" is no id: no providerId, the engine's id goes on the wire.
    calls: [{ name: "get_current_time", args: {} }],
    finishReason: "tool_calls",
    usage: { input: 35, output: 12 },
    metadata: { thought_signature: GEMINI_SIGNATURE, extra_content: { google: { thought: true, thought_signature: GEMINI_SIGNATURE } } },
  },
  "pydantic-ai-ollama-cloud-gptoss-tool-call": {
    text: "",
    thinking: OLLAMA_REASONING,
    calls: [{ name: "final_result", args: { city: "Paris", country: "France" }, providerId: "call_o2vnpxrw" }],
    finishReason: "tool_calls",
    usage: { input: 206, output: 194 },
    metadata: { reasoningField: "reasoning" },
  },
  "pydantic-ai-openrouter-mistral-tool-call": {
    text: "",
    calls: [{ name: "divide", args: { numerator: 123, denominator: 456, on_inf: "infinity" }, providerId: "3sniiMddS" }],
    finishReason: "tool_calls",
    usage: { input: 134, output: 43 },
  },
  "tgi-llama31-nonstream-tool-call-finish-stop": {
    text: "",
    calls: [{ name: "get_current_weather", args: { location: "Brooklyn, NY", format: "fahrenheit" }, providerId: "0" }],
    // Kept as the server said; the engine decides from the calls.
    finishReason: "stop",
    usage: { input: 286, output: 29 },
  },
};

