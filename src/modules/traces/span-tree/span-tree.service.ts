import { Injectable } from '@nestjs/common';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { checkId } from '#libs/traces/conventions.js';
import type { TreeCursor } from '../../datasets/tree-rows.types.js';
import type { SpanChildrenQuery, SpansByDepthQuery, SpanTreePage } from '../dto/span-tree.dto.js';
import { TraceDatasets } from '../trace-datasets.service.js';
import { TraceVersionsService } from '../trace-versions.service.js';
import { TraceErrors } from '../traces.errors.js';
import { toSpanTreePage } from '../traces.mapper.js';

/** What a cursor is bound to: one read (children of a span, or down to a depth) of one trace of one version. */
interface CursorScope {
  version: string;
  trace: string;
  read: string;
}

/**
 * A landed trace read back as a tree, a page at a time, however large: the children of a span
 * (each with its child count, so a client walks down only where there is something), or every
 * span down to a depth, level by level. Keyset pages: each costs its own spans, not the trace's.
 */
@Injectable()
export class SpanTreeService {
  constructor(
    private readonly versions: TraceVersionsService,
    private readonly traceDatasets: TraceDatasets,
  ) {}

  /** The spans directly under `parent_span_id` (the trace's roots without it), in start order. */
  async children(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    query: SpanChildrenQuery,
  ): Promise<SpanTreePage> {
    const { version } = await this.versions.traceVersion(access, datasetId, versionId);
    const traceId = landedId(query.trace_id, 32);
    const parent = query.parent_span_id === undefined ? null : landedId(query.parent_span_id, 16);
    const scope = { version: version.id, trace: traceId, read: parent === null ? 'roots' : `children:${parent}` };
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor, scope);
    // One row beyond the page says whether another follows.
    const rows = await this.traceDatasets.spanChildren(
      datasetId,
      version.number,
      traceId,
      parent,
      after,
      query.limit + 1,
    );
    if (rows.length === 0 && after === null) {
      const held =
        parent === null
          ? (await this.traceDatasets.knownTraces(datasetId, version.number, [traceId])).has(traceId)
          : await this.traceDatasets.holdsSpan(datasetId, version.number, traceId, parent);
      if (!held)
        throw new DomainError(
          TraceErrors.trace_span_not_found,
          parent === null
            ? `Version ${version.number} holds no trace ${traceId}`
            : `Trace ${traceId} of version ${version.number} holds no span ${parent}`,
          { field: parent === null ? 'trace_id' : 'parent_span_id' },
        );
    }
    return toSpanTreePage({ datasetId, versionId: version.id, traceId }, rows, query.limit, (at) =>
      encodeCursor(scope, at),
    );
  }

  /** Every span at depth `max_depth` or above (a root is 1), level by level, each level in start order. */
  async byDepth(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    query: SpansByDepthQuery,
  ): Promise<SpanTreePage> {
    const { version } = await this.versions.traceVersion(access, datasetId, versionId);
    const traceId = landedId(query.trace_id, 32);
    const scope = { version: version.id, trace: traceId, read: `depth:${query.max_depth}` };
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor, scope);
    const rows = await this.traceDatasets.spansToDepth(
      datasetId,
      version.number,
      traceId,
      query.max_depth,
      after,
      query.limit + 1,
    );
    if (rows.length === 0 && after === null)
      throw new DomainError(TraceErrors.trace_span_not_found, `Version ${version.number} holds no trace ${traceId}`, {
        field: 'trace_id',
      });
    return toSpanTreePage({ datasetId, versionId: version.id, traceId }, rows, query.limit, (at) =>
      encodeCursor(scope, at),
    );
  }
}

/** An id as landing stored it (an OTLP hex id lower-cased); one landing could never have stored is answered as not found. */
function landedId(raw: string, width: 32 | 16): string {
  const checked = checkId(raw, width);
  return checked.ok ? checked.id : raw;
}

function encodeCursor(scope: CursorScope, at: TreeCursor): string {
  return Buffer.from(JSON.stringify({ ...scope, at }), 'utf8').toString('base64url');
}

/** The position a cursor of this very read carries; 400 span_cursor_invalid for any other. */
function decodeCursor(cursor: string, scope: CursorScope): TreeCursor {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorScope> & {
      at?: Partial<TreeCursor>;
    };
    const at = parsed.at;
    const sameRead = parsed.version === scope.version && parsed.trace === scope.trace && parsed.read === scope.read;
    const depthOk = at?.depth === undefined || Number.isInteger(at.depth);
    if (sameRead && at && typeof at.sort === 'string' && typeof at.id === 'string' && depthOk)
      return { sort: at.sort, id: at.id, ...(at.depth !== undefined ? { depth: at.depth } : {}) };
  } catch {
    // Not base64url JSON: answered below like any cursor of another read.
  }
  throw new DomainError(
    TraceErrors.span_cursor_invalid,
    'The cursor was not issued for this read (same version, trace, parent_span_id or max_depth)',
    { field: 'cursor' },
  );
}
