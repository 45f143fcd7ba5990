import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DomainError } from '#libs/common/domain-error.js';
import { DatasetErrors } from '../datasets.errors.js';
import { rowObject } from '../datasets.mapper.js';
import type { QueryResponse, RowQueryRequest } from '../dto/query.dto.js';
import type { DatasetVersionEntity } from '../entities/dataset-version.entity.js';
import {
  compileFilter,
  compileProjection,
  compileSort,
  FilterError,
  type Filter,
  type FilterContext,
  type RowQuery,
} from '#libs/database/query-language.js';
import { RowsRepository, versionRowsContext } from './rows.repository.js';

const DEFAULT_LIMIT = 50;
/** Totals are exact up to this many matching rows; beyond it `total_capped` is true (counting a million rows costs seconds). */
export const TOTAL_CAP = 10_000;

/**
 * Runs the JSON query language over a version's rows in SQL (libs/database/query-language.ts).
 * Every value and JSON path key is a bind parameter; unknown columns and operators are 400
 * invalid_filter naming the member.
 */
@Injectable()
export class QueryService {
  constructor(private readonly rows: RowsRepository) {}

  /** A context for the filter compiler over the version's rows, alias `r`. */
  context(version: DatasetVersionEntity): FilterContext {
    return versionRowsContext(version.columns.map((c) => c.name));
  }

  /** A context for the filter compiler over rows with these columns (alias `r`), for a family reading rows of its own kind. */
  columnsContext(columns: Iterable<string>): FilterContext {
    return versionRowsContext(columns);
  }

  /**
   * Compiles a filter and a sort onto a context another family built (run results), with errors
   * as 400 invalid_filter pointing into the body: the filter (none when absent) and the sort keys.
   */
  compileQuery(ctx: FilterContext, filter: unknown, sort: unknown): RowQuery {
    const where =
      filter === undefined || filter === null ? undefined : this.translate(() => compileFilter(filter, ctx), '/filter');
    return { where, orderBy: this.translate(() => compileSort(sort, ctx), '/sort') };
  }

  /** Compiles a filter onto a context; errors point under `root`. */
  compileWith(ctx: FilterContext, filter: unknown, root: string): Filter {
    return this.translate(() => compileFilter(filter, ctx), root);
  }

  async query(version: DatasetVersionEntity, body: RowQueryRequest): Promise<QueryResponse> {
    const ctx = this.context(version);
    const where =
      body.filter !== undefined ? this.translate(() => compileFilter(body.filter, ctx), '/filter') : undefined;
    const orderBy = body.sort !== undefined ? this.translate(() => compileSort(body.sort, ctx), '/sort') : [];
    const data =
      body.select !== undefined ? this.translate(() => compileProjection(body.select, ctx), '/select') : undefined;
    const limit = body.limit ?? DEFAULT_LIMIT;
    const fingerprint = this.fingerprint(version, body, limit);
    const cursor = body.cursor !== undefined ? this.decodeCursor(body.cursor, fingerprint) : undefined;
    const offset = cursor?.offset ?? body.offset ?? 0;
    const withTotal = body.include_total ?? true;
    // In row order a cursor carries the last row's ordinal: each page is an index range, however deep.
    const keyset = !orderBy.length;
    const { rows, total, capped } = await this.rows.page({
      datasetId: version.datasetId,
      version: version.number,
      where,
      orderBy,
      data,
      limit: limit + 1,
      offset,
      afterOrdinal: keyset ? cursor?.after : undefined,
      withTotal,
      countLimit: TOTAL_CAP,
    });
    const more = rows.length > limit;
    return {
      dataset_id: version.datasetId,
      version_id: version.id,
      version_number: version.number,
      items: rows.slice(0, limit).map((r) => rowObject(r.row_id, r.data)),
      ...(withTotal ? { total, total_capped: capped } : {}),
      limit,
      offset,
      next_cursor: more
        ? this.encodeCursor(
            { offset: offset + limit, ...(keyset ? { after: rows[limit - 1].ordinal } : {}) },
            fingerprint,
          )
        : null,
    };
  }

  private translate<T>(compile: () => T, root: string): T {
    try {
      return compile();
    } catch (err) {
      if (err instanceof FilterError) {
        const pointer = `${root}${err.path === '/' ? '' : err.path}`;
        throw new DomainError(DatasetErrors.invalid_filter, `${pointer}: ${err.message}`, { pointer });
      }
      throw err;
    }
  }

  /** Cursors are bound to the version and the query's shape, so one cannot be replayed on another query. */
  private fingerprint(version: DatasetVersionEntity, body: RowQueryRequest, limit: number): string {
    return createHash('sha256')
      .update(JSON.stringify([version.id, body.filter ?? null, body.sort ?? null, body.select ?? null, limit]))
      .digest('base64url')
      .slice(0, 16);
  }

  private encodeCursor(position: { offset: number; after?: number }, fingerprint: string): string {
    return Buffer.from(JSON.stringify({ o: position.offset, a: position.after, f: fingerprint })).toString('base64url');
  }

  private decodeCursor(cursor: string, fingerprint: string): { offset: number; after?: number } {
    try {
      const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
        o?: unknown;
        a?: unknown;
        f?: unknown;
      };
      const valid = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
      if (parsed.f === fingerprint && valid(parsed.o) && (parsed.a === undefined || valid(parsed.a)))
        return { offset: parsed.o as number, after: parsed.a as number | undefined };
    } catch {
      // fall through
    }
    throw new DomainError(
      DatasetErrors.invalid_cursor,
      'The cursor was not issued for this query (same version, filter, sort, select and limit)',
    );
  }
}
