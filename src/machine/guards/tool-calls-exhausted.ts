/** True when the run has executed `maxToolCalls` tools: no further call may run. */
export function toolCallsExhausted(context: { toolCallCount: number; maxToolCalls: number }): boolean {
  return context.toolCallCount >= context.maxToolCalls;
}
