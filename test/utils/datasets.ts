import type { TestApp } from './test-app.js';

export interface UploadedDataset {
  datasetId: string;
  versionId: string;
  /** Row ids in dataset order. */
  rowIds: string[];
}

/** Uploads rows as a JSON file through the API and answers the dataset, its version and its row ids. */
export async function uploadRows(
  t: TestApp,
  auth: Record<string, string>,
  workspaceId: string,
  rows: Array<Record<string, unknown>>,
  filename = 'rows.json',
): Promise<UploadedDataset> {
  const res = await t.http
    .post('/datasets/upload')
    .query({ workspace_id: workspaceId })
    .set(auth)
    .attach('file', Buffer.from(JSON.stringify(rows)), filename)
    .expect(201);
  const page = await t.http.post(`/datasets/${res.body.id}/query`).set(auth).send({ limit: 1000 }).expect(200);
  return {
    datasetId: res.body.id,
    versionId: res.body.latest_version.id,
    rowIds: page.body.items.map((row: { _row_id: string }) => row._row_id),
  };
}
