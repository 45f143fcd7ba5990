import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiNotAcceptableResponse,
  ApiConsumes,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { type NodeMcpRequestHandler, toNodeHandler } from '@modelcontextprotocol/node';
import type { Request, Response } from 'express';
import { Authenticated, CurrentUser } from '#libs/auth/access.decorators.js';
import type { Principal } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { originOf } from '#libs/common/loopback-client.js';
import { currentRequestId } from '#libs/common/request-context.js';
import { MCP_MESSAGE_SCHEMA, MCP_REQUEST_EXAMPLE, MCP_RESPONSE_EXAMPLE } from './dto/mcp.dto.js';
import { refusalAsProblem, refuseStrayMembers } from './mcp-http.js';
import { McpService } from './mcp.service.js';

/**
 * The MCP endpoint: a coding agent or assistant's MCP client sends JSON-RPC messages here over
 * Streamable HTTP, with an API key (or a user's token) as its bearer. An addition beside the
 * specification (docs/mcp.md).
 */
@ApiTags('mcp')
@Controller('mcp')
export class McpController {
  private readonly serve: NodeMcpRequestHandler;

  constructor(private readonly mcp: McpService) {
    this.serve = toNodeHandler({
      fetch: async (request, options) => refusalAsProblem(await mcp.handler.fetch(request, options)),
    });
  }

  /**
   * One MCP message (initialize, tools/list, tools/call, resources/read, prompts/get, …) of the
   * 2026-07-28 revision or of the 2025 revisions (served statelessly). The answer is the JSON-RPC
   * response, as JSON or as a Server-Sent Events stream when the client accepts one and the
   * server sends messages before it. A tool the caller's role does not allow, or a record of
   * another workspace, answers a tool error naming the API's refusal. GET and DELETE (the 2025
   * revisions' server stream and session end) answer 405: nothing is kept between requests.
   */
  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'sendMcpMessage' })
  @Authenticated()
  @ApiConsumes('application/json')
  @ApiProduces('application/json', 'text/event-stream')
  @ApiHeader({
    name: 'MCP-Protocol-Version',
    required: false,
    description: 'The protocol revision the client negotiated (e.g. 2025-11-25)',
    example: '2025-11-25',
    // The transport refuses a revision it does not support (400); each is a date.
    schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10 },
  })
  @ApiBody({ schema: { ...MCP_MESSAGE_SCHEMA, example: MCP_REQUEST_EXAMPLE } })
  @ApiOkResponse({
    schema: { ...MCP_MESSAGE_SCHEMA, example: MCP_RESPONSE_EXAMPLE },
    description: 'The JSON-RPC response (or a text/event-stream carrying it)',
  })
  @ApiAcceptedResponse({ description: 'A notification (or a response) the client sent: accepted, no body' })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description:
      'malformed_json (the body is not JSON), mcp_message_invalid (not a JSON-RPC message the server accepts: the problem carries the JSON-RPC error response too, `jsonrpc`, `id` and `error`)',
  })
  @ApiNotAcceptableResponse({
    type: ProblemResponse,
    description: 'mcp_not_acceptable: the Accept header admits neither application/json nor text/event-stream',
  })
  async post(@CurrentUser() principal: Principal, @Req() req: Request, @Res() res: Response): Promise<void> {
    refuseStrayMembers(req.body);
    (req as Request & { auth?: unknown }).auth = this.mcp.authInfo({
      principal,
      authorization: req.headers.authorization ?? '',
      origin: originOf(req.socket),
      requestId: currentRequestId(),
    });
    await this.serve(req, res, req.body);
  }
}
