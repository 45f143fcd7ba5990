import { DataSource, getMetadataArgsStorage } from 'typeorm';
import { RdbmsSchemaBuilder } from 'typeorm/schema-builder/RdbmsSchemaBuilder.js';
import { postgresOptions, type DatabaseTarget } from './data-source.factory.js';

/**
 * The migrations write by hand what the entities do not describe: foreign keys, indexes (partial,
 * on expressions such as lower(name)), CHECK constraints and UNIQUE constraints over several
 * columns. TypeORM's schema builder would drop every one of them (163 statements on the schema of
 * 2026-05); this one leaves them alone and still reports every table, column, type, nullability
 * and default the entities change. A constraint or index is therefore added, changed and dropped
 * by hand in the migration, as all of them are today (docs/operations.md#schema-changes).
 */
class HandWrittenConstraintsSchemaBuilder extends RdbmsSchemaBuilder {
  protected override async dropOldForeignKeys(): Promise<void> {}
  protected override async dropOldIndices(): Promise<void> {}
  protected override async dropOldChecks(): Promise<void> {}
  protected override async dropOldExclusions(): Promise<void> {}
  protected override async dropCompositeUniqueConstraints(): Promise<void> {}
}

/** Every entity class loaded in this process (the caller imports the modules that declare them first). */
export function loadedEntities(): Function[] {
  const targets = getMetadataArgsStorage().tables.map((table) => table.target);
  return [...new Set(targets.filter((target): target is Function => typeof target === 'function'))];
}

/**
 * A PostgreSQL data source for the TypeORM CLI, not initialised (the CLI does that): the
 * service's own options, and a schema builder that leaves the hand-written constraints alone.
 */
export function cliDataSource(target: DatabaseTarget & { url: string }): DataSource {
  const dataSource = new DataSource(postgresOptions(target));
  dataSource.driver.createSchemaBuilder = () => new HandWrittenConstraintsSchemaBuilder(dataSource);
  return dataSource;
}
