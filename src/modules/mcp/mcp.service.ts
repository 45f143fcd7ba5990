import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { type AuthInfo, createMcpHandler, type McpHttpHandler, McpServer } from '@modelcontextprotocol/server';
import type { Principal } from '#libs/auth/roles.js';
import { Agent } from 'undici';
import { LoopbackClient } from '#libs/common/loopback-client.js';
import { SERVICE_VERSION } from '../../version.js';
import { McpApi } from './mcp-api.js';
import { registerPrompts } from './mcp-prompts.js';
import { registerResources } from './mcp-resources.js';
import { registerDatasetTools } from './tools/datasets.tools.js';
import { registerReviewTools } from './tools/review.tools.js';
import { registerRunTools } from './tools/runs.tools.js';
import { registerTraceTools } from './tools/traces.tools.js';

/** What the controller hands the handler about the caller, as the SDK's pass-through AuthInfo. */
export interface McpCallerInfo {
  principal: Principal;
  /** The Authorization header as the caller sent it: the tools' API calls send it again. */
  authorization: string;
  /** This process's listener, as the request reached it: where the tools' API calls go. */
  origin: string;
  requestId?: string;
}

const INSTRUCTIONS = [
  'The Evaluation Workspace Service: test datasets, runs of an application (the SUT) scored by metrics and judges, statistical comparison of runs, release gates, production traces and human review.',
  'Start from find_datasets or list_runs; answers carry the ids to drill down with. compare_runs answers whether a change between two runs is significant (paired tests, Holm-adjusted) and which rows regressed; show_diff_row reads one row in both runs; explain_gate says why a run passes or fails its release gate.',
  'Production: search_traces finds failing traces (errors, loops, failing online scores, thumbs down), show_trace reads one as a tree.',
  'Every call acts with your credentials: an API key acts in its own workspace at its role; viewers read, members start runs and label.',
].join(' ');

/**
 * The MCP server (Streamable HTTP, the 2026-07-28 revision and the 2025 revisions' stateless
 * serving, by the official SDK's createMcpHandler). A server per request, built for its caller:
 * each tool composes API operations sent to this process's own HTTP listener with the caller's
 * credentials, so access, roles, isolation, validation and audit are the operations' own
 * (docs/mcp.md, docs/decisions/0023-mcp-over-the-api.md).
 */
@Injectable()
export class McpService implements OnModuleDestroy {
  readonly handler: McpHttpHandler;
  private readonly logger = new Logger('Mcp');
  /** Connections to this process's own listener, kept between the tools' calls. */
  private readonly loopback = new Agent({ keepAliveTimeout: 10_000 });

  constructor() {
    this.handler = createMcpHandler((ctx) => this.serverFor(ctx.authInfo), {
      legacy: 'stateless',
      onerror: (err) => this.logger.warn(`MCP request failed: ${err.message}`),
    });
  }

  /** The SDK's AuthInfo for a caller the access guard authenticated. */
  authInfo(caller: McpCallerInfo): AuthInfo {
    return {
      token: caller.authorization.replace(/^\S+\s+/, ''),
      clientId: caller.principal.apiKey?.id ?? caller.principal.userId,
      scopes: [],
      extra: { caller },
    };
  }

  private serverFor(auth: AuthInfo | undefined): McpServer {
    const caller = auth?.extra?.caller as McpCallerInfo | undefined;
    // The controller's guard authenticated every request before it reaches the handler.
    if (!caller) throw new Error('An MCP request reached the handler without an authenticated caller');
    const client = new LoopbackClient(
      {
        origin: caller.origin,
        authorization: caller.authorization,
        requestId: caller.requestId,
        userAgent: `ews-mcp/${SERVICE_VERSION}`,
      },
      this.loopback,
    );
    const api = new McpApi(client, {
      userId: caller.principal.userId,
      apiKeyWorkspaceId: caller.principal.apiKey?.workspaceId,
    });
    const server = new McpServer(
      { name: 'evaluation-workspace-service', title: 'Evaluation Workspace Service', version: SERVICE_VERSION },
      { instructions: INSTRUCTIONS },
    );
    registerDatasetTools(server, api);
    registerRunTools(server, api);
    registerTraceTools(server, api);
    registerReviewTools(server, api);
    registerResources(server, api);
    registerPrompts(server);
    return server;
  }

  async onModuleDestroy(): Promise<void> {
    await this.handler.close();
    await this.loopback.close();
  }
}
