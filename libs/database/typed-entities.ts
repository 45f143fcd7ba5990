import type { ObjectLiteral, Repository } from 'typeorm';

/**
 * Rows a typed (Kysely) query read from an entity's table, as that entity: each column's value
 * set on its property (snake_case column, camelCase property), through the column's transformer
 * when it has one, as TypeORM itself hydrates them. So a repository writes its filters, sorts and
 * pages as typed queries and still answers the entities its services take.
 */
export function entitiesFrom<T extends ObjectLiteral>(repo: Repository<T>, rows: ReadonlyArray<object>): T[] {
  const columns = repo.metadata.columns;
  return rows.map((row) => {
    const entity = repo.create();
    const values = row as Record<string, unknown>;
    for (const column of columns) {
      // Columns TypeORM does not select (`select: false`) stay unset, as it leaves them.
      if (!column.isSelect || !(column.databaseName in values)) continue;
      const raw = values[column.databaseName];
      const transformer = column.transformer;
      const value =
        transformer && raw !== null && raw !== undefined
          ? (Array.isArray(transformer) ? transformer : [transformer]).reduceRight((v, t) => t.from(v), raw)
          : raw;
      column.setEntityValue(entity, value);
    }
    return entity;
  });
}
