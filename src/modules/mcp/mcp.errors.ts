import { defineErrorCodes } from '#libs/common/error-codes.js';

export const McpErrors = defineErrorCodes('mcp', {
  mcp_message_invalid: {
    status: 400,
    title: 'Invalid MCP message',
    description:
      'The body is not a JSON-RPC 2.0 message the MCP server accepts, or names a protocol revision it does not serve. The answer is a JSON-RPC error response as well: `jsonrpc`, `id` and `error` (the JSON-RPC code and message) beside the problem members.',
  },
  mcp_not_acceptable: {
    status: 406,
    title: 'Not acceptable',
    description:
      'The Accept header admits neither application/json nor text/event-stream, which the MCP Streamable HTTP transport answers with.',
  },
});
