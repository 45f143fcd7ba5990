/** An OpenAI-compatible embeddings endpoint: POST {base_url}/embeddings {model, input[, dimensions]} -> {data: [{index, embedding}]}. */
import { outboundFetch } from '#libs/common/outbound.js';

export interface RemoteEmbeddingEndpoint {
  base_url: string;
  model: string;
  dimensions: number | null;
  batch_size: number;
  key: string | null;
  timeout_ms: number;
}

/** Embeds texts in batches, in order; a failed batch throws with the endpoint's answer (the caller's job fails with it). */
export async function embedRemote(
  endpoint: RemoteEmbeddingEndpoint,
  texts: string[],
  signal?: AbortSignal,
  doFetch: typeof fetch = outboundFetch,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += endpoint.batch_size) {
    const input = texts.slice(start, start + endpoint.batch_size);
    const timeout = AbortSignal.timeout(endpoint.timeout_ms);
    const response = await doFetch(`${endpoint.base_url}/embeddings`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(endpoint.key ? { authorization: `Bearer ${endpoint.key}` } : {}),
      },
      body: JSON.stringify({
        model: endpoint.model,
        input,
        ...(endpoint.dimensions ? { dimensions: endpoint.dimensions } : {}),
      }),
      signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`the embeddings endpoint answered ${response.status}: ${text.slice(0, 300)}`);
    const data = (JSON.parse(text) as { data?: Array<{ index: number; embedding: number[] }> }).data;
    if (!Array.isArray(data) || data.length !== input.length)
      throw new Error(
        `the embeddings endpoint returned ${Array.isArray(data) ? data.length : 'no'} embeddings for ${input.length} inputs`,
      );
    for (const item of [...data].sort((a, b) => a.index - b.index))
      out.push(normalise(Float32Array.from(item.embedding)));
  }
  return out;
}

function normalise(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
