import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { DatasetResponse } from '../../datasets/dto/dataset.dto.js';
import type { QueryResponse } from '../../datasets/dto/query.dto.js';
import { type McpApi, path, ToolInputError } from '../mcp-api.js';
import { answer, clipText, clipValue, guarded } from '../tool-results.js';
import {
  defaultVersion,
  id,
  pageArg,
  pageSizeArg,
  paging,
  pagingOf,
  READS,
  versionOf,
  workspaceArg,
} from './tool-kit.js';

const datasetSummary = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  current_version_id: z.string().nullable(),
  latest_version: z.object({ id: z.string(), number: z.number(), row_count: z.number() }).nullable(),
  version_count: z.number(),
});

function summary(d: DatasetResponse): z.infer<typeof datasetSummary> {
  const latest = d.latest_version;
  return {
    id: d.id,
    name: d.name,
    kind: d.kind,
    description: d.description === null ? null : clipText(d.description, 200),
    tags: d.tags,
    current_version_id: d.current_version_id,
    latest_version: latest ? { id: latest.id, number: latest.number, row_count: latest.row_count } : null,
    version_count: d.version_count,
  };
}

const rows = z.array(z.record(z.string(), z.unknown()));

/** Datasets: find them, see one's columns and a few rows, query rows in the query language. */
export function registerDatasetTools(server: McpServer, api: McpApi): void {
  findDatasets(server, api);
  showDataset(server, api);
  queryRows(server, api);
}

/** Find datasets: the `find_datasets` tool. */
function findDatasets(server: McpServer, api: McpApi): void {
  server.registerTool(
    'find_datasets',
    {
      title: 'Find datasets',
      description:
        'Lists the datasets of a workspace, newest first: test-case datasets (kind "rows") and landed production traces (kind "traces"). Filter by text in the name or description, kind or tag. Each item has the ids to drill down with show_dataset or query_rows.',
      inputSchema: z.object({
        workspace_id: workspaceArg(),
        text: z.string().max(200).optional().describe('Text the name or description contains'),
        kind: z.enum(['rows', 'traces']).optional(),
        tag: z.string().max(100).optional(),
        page: pageArg(),
        page_size: pageSizeArg(),
      }),
      outputSchema: z.object({ workspace_id: z.string(), datasets: z.array(datasetSummary), paging }),
      annotations: READS,
    },
    guarded(async (args) => {
      const workspaceId = await api.workspace(args.workspace_id);
      const page = await api.get<{ items: DatasetResponse[]; total: number; page: number; page_size: number }>(
        '/datasets',
        {
          workspace_id: workspaceId,
          q: args.text,
          kind: args.kind,
          tag: args.tag,
          page: args.page,
          page_size: args.page_size,
        },
      );
      return answer({
        workspace_id: workspaceId,
        datasets: page.items.map(summary),
        paging: pagingOf(page, page.items.length),
      });
    }),
  );
}

/** Show a dataset: the `show_dataset` tool. */
function showDataset(server: McpServer, api: McpApi): void {
  server.registerTool(
    'show_dataset',
    {
      title: 'Show a dataset',
      description:
        "A dataset's summary, the columns of one version (type, nulls, distinct values, lengths) with the canonical field mapping (input, expected_output, context, session_id), and a few sample rows, each value clipped to 400 characters. Default version: the current one, else the newest (a trace dataset: its newest).",
      inputSchema: z.object({
        dataset_id: id(),
        version_id: id().optional(),
        sample_rows: z.int().min(0).max(20).default(3),
      }),
      outputSchema: z.object({
        dataset: datasetSummary,
        version_id: z.string().nullable(),
        version_number: z.number().nullable(),
        row_count: z.number(),
        columns: z.array(z.record(z.string(), z.unknown())),
        mapping: z.record(z.string(), z.unknown()).nullable(),
        sample: rows,
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const dataset = await api.get<DatasetResponse>(path`/datasets/${args.dataset_id}`);
      // The dataset read above names its default version: no second read.
      const versionId = args.version_id ?? defaultVersion(dataset);
      if (!versionId)
        return answer({
          dataset: summary(dataset),
          version_id: null,
          version_number: null,
          row_count: 0,
          columns: [],
          mapping: null,
          sample: [],
        });
      const schema = await api.get<{
        version_number: number;
        row_count: number;
        columns: object[];
        mapping: object | null;
      }>(path`/datasets/${args.dataset_id}/schema`, { version_id: versionId });
      const sample =
        args.sample_rows === 0
          ? []
          : (
              await api.post<QueryResponse>(path`/datasets/${args.dataset_id}/versions/${versionId}/query`, {
                limit: args.sample_rows,
                include_total: false,
              })
            ).items;
      return answer({
        dataset: summary(dataset),
        version_id: versionId,
        version_number: schema.version_number,
        row_count: schema.row_count,
        columns: schema.columns as Array<Record<string, unknown>>,
        mapping: schema.mapping as Record<string, unknown> | null,
        sample: sample.map((row) => clipValue(row) as Record<string, unknown>),
      });
    }),
  );
}

/** Query dataset rows: the `query_rows` tool. */
function queryRows(server: McpServer, api: McpApi): void {
  server.registerTool(
    'query_rows',
    {
      title: 'Query dataset rows',
      description:
        'Rows of a dataset version matching a filter in the service\'s query language, e.g. {"field": "topic", "op": "eq", "value": "billing"} or {"and": [...]}; sorted, with chosen columns, paged by cursor. Values are clipped to 400 characters; read one row whole by filtering on its _row_id with max_chars raised.',
      inputSchema: z.object({
        dataset_id: id(),
        version_id: id().optional(),
        filter: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('A query-language filter (docs/query-language.md)'),
        sort: z
          .array(z.object({ field: z.string().max(200), direction: z.enum(['asc', 'desc']).default('asc') }))
          .max(5)
          .optional(),
        columns: z.array(z.string().max(200)).max(50).optional().describe('Columns to return (default: all)'),
        limit: z.int().min(1).max(100).default(20),
        cursor: z.string().max(2000).optional().describe('next_cursor of the previous page'),
        max_chars: z.int().min(50).max(20_000).default(400).describe('Characters kept of each value'),
      }),
      outputSchema: z.object({
        dataset_id: z.string(),
        version_id: z.string(),
        version_number: z.number(),
        total: z.number().nullable(),
        rows,
        next_cursor: z.string().nullable(),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const versionId = await versionOf(api, args.dataset_id, args.version_id);
      if (!versionId) throw new ToolInputError('The dataset has no version yet: nothing to query.');
      const page = await api.post<QueryResponse>(path`/datasets/${args.dataset_id}/versions/${versionId}/query`, {
        filter: args.filter,
        sort: args.sort,
        select: args.columns,
        limit: args.limit,
        cursor: args.cursor,
      });
      return answer({
        dataset_id: page.dataset_id,
        version_id: page.version_id,
        version_number: page.version_number,
        total: page.total ?? null,
        rows: page.items.map((row) => clipValue(row, args.max_chars) as Record<string, unknown>),
        next_cursor: page.next_cursor,
      });
    }),
  );
}
