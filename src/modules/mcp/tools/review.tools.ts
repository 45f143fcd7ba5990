import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type {
  LeasedItemResponse,
  ReviewItemResponse,
  ReviewLabelResponse,
  ReviewQueueResponse,
} from '../../review/dto/review.dto.js';
import { type McpApi, path } from '../mcp-api.js';
import { answer, clipValue, guarded } from '../tool-results.js';
import { id, pageArg, pageSizeArg, paging, pagingOf, READS, workspaceArg } from './tool-kit.js';

type Page<T> = { items: T[]; total: number; page: number; page_size: number };

const item = z.object({
  id: z.string(),
  ref: z.string(),
  run_id: z.string().nullable(),
  state: z.string(),
  labelled: z.number(),
  final_label: z.record(z.string(), z.unknown()).nullable(),
  context: z.unknown(),
});

function itemOf(i: ReviewItemResponse, maxChars = 300): z.infer<typeof item> {
  return {
    id: i.id,
    ref: i.ref,
    run_id: i.run_id,
    state: i.state,
    labelled: i.labelled,
    final_label: i.final_label as Record<string, unknown> | null,
    context: clipValue(i.context, maxChars),
  };
}

/** Human review: see the queues and their items, take the next item and label it. */
export function registerReviewTools(server: McpServer, api: McpApi): void {
  listReviewQueues(server, api);
  listReviewItems(server, api);
  nextReviewItem(server, api);
  labelReviewItem(server, api);
}

/** List review queues: the `list_review_queues` tool. */
function listReviewQueues(server: McpServer, api: McpApi): void {
  server.registerTool(
    'list_review_queues',
    {
      title: 'List review queues',
      description:
        "Review queues of a workspace: source, rubric (each field's type and options), item counts (pending, final, disagreement) and state.",
      inputSchema: z.object({
        workspace_id: workspaceArg(),
        state: z.enum(['open', 'closed']).optional(),
        page: pageArg(),
        page_size: pageSizeArg(),
      }),
      outputSchema: z.object({ queues: z.array(z.record(z.string(), z.unknown())), paging }),
      annotations: READS,
    },
    guarded(async (args) => {
      const workspaceId = await api.workspace(args.workspace_id);
      const page = await api.get<Page<ReviewQueueResponse>>('/review-queues', { ...args, workspace_id: workspaceId });
      const queues = page.items.map((q) => ({
        id: q.id,
        name: q.name,
        state: q.state,
        source: q.source,
        overlap: q.overlap,
        rubric: q.rubric,
        items: q.items,
      }));
      return answer({
        queues: clipValue(queues, 200) as Array<Record<string, unknown>>,
        paging: pagingOf(page, page.items.length),
      });
    }),
  );
}

/** List review items: the `list_review_items` tool. */
function listReviewItems(server: McpServer, api: McpApi): void {
  server.registerTool(
    'list_review_items',
    {
      title: 'List review items',
      description:
        "Items of a review queue with their state, how many labels they have and their final label; each item's context (what a reviewer sees) clipped.",
      inputSchema: z.object({
        queue_id: id(),
        state: z.enum(['pending', 'final', 'disagreement']).optional(),
        page: pageArg(),
        page_size: pageSizeArg(),
      }),
      outputSchema: z.object({ items: z.array(item), paging }),
      annotations: READS,
    },
    guarded(async (args) => {
      const { queue_id, ...query } = args;
      const page = await api.get<Page<ReviewItemResponse>>(path`/review-queues/${queue_id}/items`, query);
      return answer({ items: page.items.map((i) => itemOf(i)), paging: pagingOf(page, page.items.length) });
    }),
  );
}

/** Take the next item to review: the `next_review_item` tool. */
function nextReviewItem(server: McpServer, api: McpApi): void {
  server.registerTool(
    'next_review_item',
    {
      title: 'Take the next item to review',
      description:
        'Leases the next item of a queue that still needs your label (reviewers are blind to each other) and answers it with the rubric version to label under and when the lease ends. Then label it with label_review_item. Asking again while you hold a lease answers the same item.',
      inputSchema: z.object({ queue_id: id(), max_chars: z.int().min(50).max(20_000).default(2000) }),
      outputSchema: z.object({
        item: item.nullable(),
        rubric: z.record(z.string(), z.unknown()).nullable(),
        lease_expires_at: z.string().nullable(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    guarded(async (args) => {
      const leased = await api.post<LeasedItemResponse | undefined>(
        path`/review-queues/${args.queue_id}/items:next`,
        {},
      );
      if (!leased) return answer({ item: null, rubric: null, lease_expires_at: null });
      return answer({
        item: itemOf(leased.item, args.max_chars),
        rubric: leased.rubric as unknown as Record<string, unknown>,
        lease_expires_at: String(leased.lease_expires_at),
      });
    }),
  );
}

/** Label a review item: the `label_review_item` tool. */
function labelReviewItem(server: McpServer, api: McpApi): void {
  server.registerTool(
    'label_review_item',
    {
      title: 'Label a review item',
      description:
        "Submits your label for an item you lease (next_review_item): values by rubric field name, pass_fail true/false, categorical one of its options, numeric an integer in its scale, free_text text. Once an item has as many labels as the queue's overlap and they agree, its final label is set.",
      inputSchema: z.object({
        queue_id: id(),
        item_id: id(),
        values: z.record(z.string().max(100), z.union([z.boolean(), z.number(), z.string().max(10_000)])),
      }),
      outputSchema: z.object({
        label_id: z.string(),
        item_id: z.string(),
        values: z.record(z.string(), z.unknown()),
        rubric_version: z.number(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    guarded(async (args) => {
      const label = await api.post<ReviewLabelResponse>(
        path`/review-queues/${args.queue_id}/items/${args.item_id}/labels`,
        {
          values: args.values,
        },
      );
      return answer({
        label_id: label.id,
        item_id: label.item_id,
        values: label.values,
        rubric_version: label.rubric_version,
      });
    }),
  );
}
