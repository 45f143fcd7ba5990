/**
 * How a family's rows make trees: rows sharing the value under `group` form one, each row is
 * named by `id` and hangs under the row named by its `parent`, siblings in the order of the value
 * under `sort` (then `id`). A row whose parent is empty, itself or not in the group is a root.
 */
export interface TreeKeys {
  group: string;
  id: string;
  parent: string;
  sort: string;
}

/** Where a page ended: the last row's value under the sort key and its id (and its depth, read by depth). */
export interface TreeCursor {
  depth?: number;
  sort: string;
  id: string;
}

/** A row of a tree with how many rows hang under it directly (and its depth, read by depth; a root is 1). */
export interface TreeRow {
  data: Record<string, unknown>;
  child_count: number;
  depth: number | null;
}
