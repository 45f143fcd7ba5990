import {
  McpServer,
  type Resource,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { ReportContentResponse } from '../reports/dto/reports.dto.js';
import { ApiRefusal, type McpApi, path, ToolInputError } from './mcp-api.js';

const LISTED = 50;

/** A refusal as the protocol's error for a resource: not found (404) or invalid params (any other 4xx). */
async function reading<T>(uri: URL, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof ApiRefusal && err.status === 404) throw new ResourceNotFoundError(uri.href, err.message);
    if (err instanceof ApiRefusal)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `HTTP ${err.status}: ${err.message}`);
    throw err;
  }
}

/** The listed workspace of a resource list: none when a user of several workspaces names none (nothing listed, reads still work). */
async function listedWorkspace(api: McpApi): Promise<string | undefined> {
  try {
    return await api.workspace();
  } catch (err) {
    if (err instanceof ToolInputError) return undefined;
    throw err;
  }
}

/** The newest records of the caller's workspace at `path`, each as a resource. */
async function listing<T>(
  api: McpApi,
  path: string,
  resource: (item: T) => Resource,
): Promise<{ resources: Resource[] }> {
  const workspaceId = await listedWorkspace(api);
  if (!workspaceId) return { resources: [] };
  const page = await api.get<{ items: T[] }>(path, { workspace_id: workspaceId, page_size: LISTED });
  return { resources: page.items.map(resource) };
}

/** Reports as Markdown and dataset schemas as JSON, by URI; the newest of each listed. */
export function registerResources(server: McpServer, api: McpApi): void {
  server.registerResource(
    'report',
    new ResourceTemplate('ews://reports/{report_id}', {
      list: () =>
        listing<{ id: string; title: string; run_id: string }>(api, '/reports', (r) => ({
          uri: `ews://reports/${r.id}`,
          name: r.title,
          description: `The report of run ${r.run_id}`,
          mimeType: 'text/markdown',
        })),
    }),
    { title: 'Report', description: 'A run report as one Markdown document', mimeType: 'text/markdown' },
    async (uri, variables) =>
      reading(uri, async () => {
        const content = await api.get<ReportContentResponse>(path`/reports/${String(variables.report_id)}/content`);
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: content.markdown }] };
      }),
  );

  server.registerResource(
    'dataset-schema',
    new ResourceTemplate('ews://datasets/{dataset_id}/schema', {
      list: () =>
        listing<{ id: string; name: string; kind: string }>(api, '/datasets', (d) => ({
          uri: `ews://datasets/${d.id}/schema`,
          name: `${d.name} schema`,
          description: `Columns and field mapping of the ${d.kind === 'traces' ? 'trace' : 'test-case'} dataset ${d.name}`,
          mimeType: 'application/json',
        })),
    }),
    {
      title: 'Dataset schema',
      description:
        "The columns of a dataset's current version (else its newest) with their statistics and the field mapping",
      mimeType: 'application/json',
    },
    async (uri, variables) =>
      reading(uri, async () => {
        const schema = await api.get<unknown>(path`/datasets/${String(variables.dataset_id)}/schema`);
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(schema, null, 2) }] };
      }),
  );
}
