/**
 * A JSON-RPC 2.0 message of the Model Context Protocol (https://modelcontextprotocol.io/specification),
 * as the OpenAPI document shows the MCP endpoint's body and answer: the protocol's own schema
 * governs it, and the MCP SDK validates it, so it is described here rather than as a DTO.
 */
export const MCP_MESSAGE_SCHEMA = {
  type: 'object',
  description: 'A JSON-RPC 2.0 message of the Model Context Protocol',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: {
      oneOf: [
        { type: 'string', maxLength: 200 },
        { type: 'integer', format: 'int64', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      ],
      description: 'Request id (absent in notifications)',
    },
    method: { type: 'string', maxLength: 200, description: 'Requests and notifications: the method' },
    params: { type: 'object', additionalProperties: true, description: "Requests: the method's parameters" },
    result: { type: 'object', additionalProperties: true, description: 'Responses: the result' },
    error: {
      type: 'object',
      additionalProperties: true,
      description: 'Responses: the JSON-RPC error (code, message, data)',
    },
  },
  additionalProperties: false,
};

export const MCP_REQUEST_EXAMPLE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'compare_runs',
    arguments: {
      base_run_id: '27e1b0d8-e509-43eb-a23c-37b7a89187e2',
      candidate_run_id: 'cab22811-9604-4326-bc9d-ff3c6d2bd1d4',
    },
  },
};

export const MCP_RESPONSE_EXAMPLE = {
  jsonrpc: '2.0',
  id: 1,
  result: {
    content: [{ type: 'text', text: '{"counts":{"rows":214,"regressed":9,"improved":3}}' }],
    structuredContent: { counts: { rows: 214, regressed: 9, improved: 3 } },
  },
};
