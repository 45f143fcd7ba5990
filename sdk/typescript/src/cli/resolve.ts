import type { EwsClient } from '../client.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A mistake in what the command was given (exit code 2, like every error). */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const isUuid = (value: string): boolean => UUID.test(value);

/** The one record named `name` among `items`, or a UsageError naming what there is. */
function byName<T extends { id: string; name: string }>(items: T[], name: string, what: string): T {
  const found = items.filter((item) => item.name === name);
  if (found.length === 1) return found[0];
  if (found.length > 1)
    throw new UsageError(
      `${found.length} ${what}s are named "${name}": pass the id instead (${found.map((f) => f.id).join(', ')})`,
    );
  const known = items.slice(0, 10).map((item) => `"${item.name}"`);
  throw new UsageError(`no ${what} named "${name}"${known.length ? ` (found ${known.join(', ')})` : ''}`);
}

/** The workspace: the one given (id or name), else the only one the key or user sees. */
export async function resolveWorkspace(client: EwsClient, given: string | undefined): Promise<string> {
  if (given && isUuid(given)) return given;
  const page = await client.workspaces.listWorkspaces({ q: given, page_size: 100 });
  if (given) return byName(page.items, given, 'workspace').id;
  if (page.items.length === 1) return page.items[0].id;
  throw new UsageError(`name the workspace with --workspace or EWS_WORKSPACE (you see ${page.total} workspaces)`);
}

export async function resolveDataset(client: EwsClient, workspaceId: string, given: string): Promise<string> {
  if (isUuid(given)) return given;
  return byName(
    (await client.datasets.listDatasets({ workspace_id: workspaceId, q: given, page_size: 100 })).items,
    given,
    'dataset',
  ).id;
}

/** A dataset with this name, if there is one (for an upload that adds a version). */
export async function findDataset(client: EwsClient, workspaceId: string, name: string): Promise<string | undefined> {
  const items = (
    await client.datasets.listDatasets({ workspace_id: workspaceId, q: name, page_size: 100 })
  ).items.filter((d) => d.name === name);
  if (items.length > 1) throw new UsageError(`${items.length} datasets are named "${name}": pass the id instead`);
  return items[0]?.id;
}

/** A version by id or by number (`3` or `v3`). */
export async function resolveVersion(client: EwsClient, datasetId: string, given: string): Promise<string> {
  if (isUuid(given)) return given;
  const number = Number(given.replace(/^v/i, ''));
  if (!Number.isInteger(number) || number < 1)
    throw new UsageError(`--version takes a version number (3, v3) or id, not "${given}"`);
  for (let page = 1; ; page++) {
    const versions = await client.datasets.listDatasetVersions({ datasetId, page, page_size: 100 });
    const found = versions.items.find((v) => v.number === number);
    if (found) return found.id;
    if (page * 100 >= versions.total) throw new UsageError(`the dataset has no version ${number}`);
  }
}

/** The version a partition is looked up in: the one given, else the dataset's current (else newest) one. */
export async function defaultVersion(client: EwsClient, datasetId: string): Promise<string> {
  const dataset = await client.datasets.getDataset({ datasetId });
  const id = dataset.current_version_id ?? dataset.latest_version?.id;
  if (!id) throw new UsageError(`dataset ${dataset.name} has no version yet`);
  return id;
}

export async function resolvePartition(
  client: EwsClient,
  datasetId: string,
  versionId: string,
  given: string,
): Promise<string> {
  if (isUuid(given)) return given;
  return byName(await client.datasets.listPartitions({ datasetId, versionId }), given, 'partition').id;
}

export async function resolveSut(client: EwsClient, workspaceId: string, given: string): Promise<string> {
  if (isUuid(given)) return given;
  return byName(
    (await client.suts.listSuts({ workspace_id: workspaceId, q: given, page_size: 100 })).items,
    given,
    'SUT',
  ).id;
}

/** A connection of the SUT by id or name; without one, the SUT's only connection. */
export async function resolveConnection(client: EwsClient, sutId: string, given: string | undefined): Promise<string> {
  if (given && isUuid(given)) return given;
  const connections = await client.suts.listSutConnections({ sutId });
  if (given) return byName(connections, given, 'connection').id;
  if (connections.length === 1) return connections[0].id;
  throw new UsageError(`the SUT has ${connections.length} connections: name one with --connection`);
}

export async function resolveEvalConfig(client: EwsClient, workspaceId: string, given: string): Promise<string> {
  if (isUuid(given)) return given;
  return byName(
    (await client.evalConfigs.listEvalConfigs({ workspace_id: workspaceId, q: given, page_size: 100 })).items,
    given,
    'eval config',
  ).id;
}
