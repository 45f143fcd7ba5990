import { Module } from '@nestjs/common';
import { McpController } from './mcp.controller.js';
import { McpService } from './mcp.service.js';
import './mcp.errors.js';

/** The MCP server: the service's operations as tools, resources and prompts for coding agents (docs/mcp.md). */
@Module({
  controllers: [McpController],
  providers: [McpService],
})
export class McpModule {}
