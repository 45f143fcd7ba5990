import { Injectable } from '@nestjs/common';
import type { Filter } from '#libs/database/query-language.js';
import { BulkRowsRepository } from './bulk-rows.repository.js';
import { TreeRowsRepository } from './tree-rows.repository.js';
import type { TreeCursor, TreeKeys, TreeRow } from './tree-rows.types.js';

/** Rows a page of KeyedRowsService.byKey holds at most, unless told. */
const PAGE_SIZE = 5000;

/**
 * A version's rows read by a key of their data, for families that give the key a meaning of
 * their own (a trace dataset's rows are spans, grouped by `trace_id`): the rows in pages grouped by
 * the value under the key, how many distinct values there are, which of some values are present.
 * Keys are plain words (letters, digits, underscores), written into the statement so an index over
 * the key serves it.
 */
@Injectable()
export class KeyedRowsService {
  constructor(
    private readonly rows: BulkRowsRepository,
    private readonly trees: TreeRowsRepository,
  ) {}

  /**
   * The data of the rows version `number` shows that hold `key` and every key of `holding`, by the
   * value under `key` then row order, in pages: a group's rows are consecutive (a page may end
   * inside one).
   */
  byKey(
    datasetId: string,
    number: number,
    key: string,
    holding: string[] = [],
    pageSize = PAGE_SIZE,
  ): AsyncGenerator<Array<Record<string, unknown>>> {
    return this.rows.byKey(datasetId, number, key, holding, pageSize);
  }

  /** How many distinct values the version's rows hold under `key`. */
  countDistinct(datasetId: string, number: number, key: string): Promise<number> {
    return this.rows.countDistinct(datasetId, number, key);
  }

  /** Which of `values` the version's rows hold under `key` (among rows holding every key of `holding`: a partial index's predicate). */
  presentValues(
    datasetId: string,
    number: number,
    key: string,
    values: string[],
    holding: string[] = [],
  ): Promise<Set<string>> {
    return this.rows.presentValues(datasetId, number, key, values, holding);
  }

  /**
   * The rows the dataset shows now past ordinal `after` (row order, at most `limit`), each with
   * whether the compiled filter holds for it: how a reader follows what lands, keeping the last
   * ordinal it read (with `onlyMatching`: only the rows the filter holds for). Nothing while a
   * landing is writing the next version.
   */
  landedAfter(
    datasetId: string,
    after: number,
    limit: number,
    filter?: Filter,
    onlyMatching = false,
  ): Promise<Array<{ ordinal: number; data: Record<string, unknown>; matched: boolean }>> {
    return this.rows.landedAfter(datasetId, after, limit, filter, onlyMatching);
  }

  /** The data of the rows the dataset shows now whose value under `key` is one of `values` (and that hold every key of `holding`: a partial index's predicate), by value then row order. */
  currentWithValues(
    datasetId: string,
    key: string,
    values: string[],
    holding: string[] = [],
  ): Promise<Array<Record<string, unknown>>> {
    return this.rows.currentWithValues(datasetId, key, values, holding);
  }

  /** The rows of version `number` directly under `parentId` in the tree of `groupValue` (its roots when null), a keyset page, each with its child count. */
  treeChildren(
    datasetId: string,
    number: number,
    keys: TreeKeys,
    groupValue: string,
    parentId: string | null,
    after: TreeCursor | null,
    limit: number,
  ): Promise<TreeRow[]> {
    return this.trees.children(datasetId, number, keys, groupValue, parentId, after, limit);
  }

  /** The rows of version `number` at depth `maxDepth` or above in the tree of `groupValue` (a root is 1), a keyset page by depth, each with its child count. */
  treeToDepth(
    datasetId: string,
    number: number,
    keys: TreeKeys,
    groupValue: string,
    maxDepth: number,
    after: TreeCursor | null,
    limit: number,
  ): Promise<TreeRow[]> {
    return this.trees.toDepth(datasetId, number, keys, groupValue, maxDepth, after, limit);
  }

  /** Whether the tree of `groupValue` in version `number` holds a row named `id`. */
  treeHolds(datasetId: string, number: number, keys: TreeKeys, groupValue: string, id: string): Promise<boolean> {
    return this.trees.holds(datasetId, number, keys, groupValue, id);
  }
}
