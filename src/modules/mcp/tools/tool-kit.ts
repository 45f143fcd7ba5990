import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { McpApi } from '../mcp-api.js';
import { path } from '../mcp-api.js';

/** A tool that reads only: it changes nothing, and calling it twice answers the same. */
export const READS: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** An id of a record (any UUID version the service issues). */
export const id = () => z.guid();
export const workspaceArg = () =>
  id().optional().describe("The workspace; default: an API key's own, or your only membership");
export const pageArg = () => z.int().min(1).max(10_000).default(1).describe('Page number, from 1');
export const pageSizeArg = (max = 50, fallback = 20) =>
  z.int().min(1).max(max).default(fallback).describe(`Items per page (1..${max})`);

/** The paging of a list answer: where this page is and whether another follows. */
export const paging = z.object({ total: z.number(), page: z.number(), page_size: z.number(), more: z.boolean() });
export function pagingOf(page: { total: number; page: number; page_size: number }, shown: number) {
  return {
    total: page.total,
    page: page.page,
    page_size: page.page_size,
    more: (page.page - 1) * page.page_size + shown < page.total,
  };
}

interface DatasetHead {
  kind: string;
  current_version_id: string | null;
  latest_version: { id: string } | null;
}

/**
 * The version a tool reads when none is named: a test-case dataset's current (promoted) version,
 * else its newest, as the API's own defaults do; a trace dataset's newest (its live head).
 */
export function defaultVersion(dataset: DatasetHead): string | null {
  if (dataset.kind === 'traces') return dataset.latest_version?.id ?? null;
  return dataset.current_version_id ?? dataset.latest_version?.id ?? null;
}

/** The version named, else the dataset's default version (one read of the dataset). */
export async function versionOf(api: McpApi, datasetId: string, named?: string): Promise<string | null> {
  return named ?? defaultVersion(await api.get<DatasetHead>(path`/datasets/${datasetId}`));
}
