/**
 * The mutator every orval-generated call goes through (orval's custom fetch): it resolves the
 * generated path against the base URL, adds the bearer token, and answers what the generated
 * types expect, `{ data, status, headers }`, the body parsed when it is JSON.
 */
export const connection = { baseUrl: '', token: '' };

export async function customFetch<T>(url: string, options: RequestInit): Promise<T> {
  const headers = new Headers(options.headers);
  if (connection.token) headers.set('Authorization', `Bearer ${connection.token}`);
  const response = await fetch(new URL(url, connection.baseUrl), { ...options, headers });
  const text = await response.text();
  const data: unknown = text && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text;
  return { data, status: response.status, headers: response.headers } as T;
}
