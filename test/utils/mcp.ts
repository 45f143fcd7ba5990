import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';

/** How the client negotiates the revision: 'legacy' speaks the 2025 handshake (initialize), 'modern' pins 2026-07-28. */
export type Era = 'legacy' | 'modern';

/** An MCP client of the official TypeScript SDK, connected to the service's /mcp with a bearer credential. */
export async function mcpClient(baseUrl: string, bearer: string, era: Era = 'legacy'): Promise<Client> {
  const client = new Client(
    { name: 'ews-e2e', version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

/** A tool's structured answer, failing the test with the tool's own words when it answered an error. */
export async function callOk<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} answered an error: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** A tool's error text (the call must answer isError). */
export async function callRefused(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!result.isError) throw new Error(`${name} did not refuse: ${JSON.stringify(result.structuredContent)}`);
  return (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');
}
