/** Attribute names of the conventions, where no package publishes them. */

// ---------------------------------------------------------------------------------------------
// Attribute names not taken from a package (gen_ai.* copied from @opentelemetry/semantic-conventions
// incubating, which is a devDependency only; Traceloop and Langfuse publish no JS constants we have).
// ---------------------------------------------------------------------------------------------

export const GEN_AI = {
  OPERATION_NAME: 'gen_ai.operation.name',
  SYSTEM: 'gen_ai.system',
  PROVIDER_NAME: 'gen_ai.provider.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  RESPONSE_MODEL: 'gen_ai.response.model',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  USAGE_PROMPT_TOKENS: 'gen_ai.usage.prompt_tokens',
  USAGE_COMPLETION_TOKENS: 'gen_ai.usage.completion_tokens',
  USAGE_TOTAL_TOKENS: 'gen_ai.usage.total_tokens',
  INPUT_MESSAGES: 'gen_ai.input.messages',
  OUTPUT_MESSAGES: 'gen_ai.output.messages',
  PROMPT: 'gen_ai.prompt',
  COMPLETION: 'gen_ai.completion',
  CONVERSATION_ID: 'gen_ai.conversation.id',
  TOOL_NAME: 'gen_ai.tool.name',
  TOOL_CALL_ID: 'gen_ai.tool.call.id',
  TOOL_CALL_ARGUMENTS: 'gen_ai.tool.call.arguments',
  TOOL_CALL_RESULT: 'gen_ai.tool.call.result',
  AGENT_NAME: 'gen_ai.agent.name',
  AGENT_ID: 'gen_ai.agent.id',
  /** Before semantic-conventions-genai v0.1.0: `invoke_workflow` spans named their workflow here (now gen_ai.agent.name) */
  WORKFLOW_NAME: 'gen_ai.workflow.name',
  SYSTEM_INSTRUCTIONS: 'gen_ai.system_instructions',
  RETRIEVAL_DOCUMENTS: 'gen_ai.retrieval.documents',
  RETRIEVAL_QUERY_TEXT: 'gen_ai.retrieval.query.text',
  ERROR_TYPE: 'error.type',
  USER_ID: 'user.id',
  ENDUSER_ID: 'enduser.id',
} as const;

/** The MCP semantic conventions (published with the GenAI ones, semantic-conventions-genai v0.1.0). */
export const MCP = {
  METHOD_NAME: 'mcp.method.name',
  SESSION_ID: 'mcp.session.id',
  /** The method whose spans are tool calls */
  TOOLS_CALL: 'tools/call',
  JSONRPC_REQUEST_ID: 'jsonrpc.request.id',
  SERVER_ADDRESS: 'server.address',
  SERVER_PORT: 'server.port',
} as const;

export const TRACELOOP = {
  SPAN_KIND: 'traceloop.span.kind',
  ENTITY_NAME: 'traceloop.entity.name',
  ENTITY_INPUT: 'traceloop.entity.input',
  ENTITY_OUTPUT: 'traceloop.entity.output',
  ASSOCIATION_PREFIX: 'traceloop.association.properties.',
  LLM_REQUEST_TYPE: 'llm.request.type',
  LLM_USAGE_TOTAL_TOKENS: 'llm.usage.total_tokens',
  LLM_REQUEST_MODEL: 'llm.request.model',
  LLM_RESPONSE_MODEL: 'llm.response.model',
} as const;

export const LANGFUSE = {
  OBSERVATION_TYPE: 'langfuse.observation.type',
  OBSERVATION_INPUT: 'langfuse.observation.input',
  OBSERVATION_OUTPUT: 'langfuse.observation.output',
  OBSERVATION_MODEL: 'langfuse.observation.model.name',
  OBSERVATION_USAGE: 'langfuse.observation.usage_details',
  OBSERVATION_COST: 'langfuse.observation.cost_details',
  OBSERVATION_LEVEL: 'langfuse.observation.level',
  OBSERVATION_STATUS_MESSAGE: 'langfuse.observation.status_message',
  SESSION_ID: 'langfuse.session.id',
  USER_ID: 'langfuse.user.id',
  TRACE_NAME: 'langfuse.trace.name',
  TRACE_INPUT: 'langfuse.trace.input',
  TRACE_OUTPUT: 'langfuse.trace.output',
} as const;
