// The CSV every upload benchmark sends, and curl sending it: a client in its own process, so the
// server's event loop does only server work.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const LANGS = ['en', 'fr', 'de', 'es', 'it'];

/** `n` rows of six columns (quoted text with commas, numbers, a category), ids from `offset`. */
export function csvOf(n, offset = 0) {
  const lines = ['id,question,answer,language,difficulty,score'];
  for (let i = offset; i < offset + n; i++) {
    lines.push(
      `${i},"What is question number ${i}, please?","Answer ${i} is ${(i * 7919) % 1000}",${LANGS[i % 5]},${i % 10},${((i * 31) % 1000) / 10}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A multipart POST of `file` (and `fields`) to `url` with curl; answers the parsed JSON body. */
export async function curlPostFile(url, token, file, fields = {}) {
  const args = ['-sS', '-f', '-H', `Authorization: Bearer ${token}`, '-F', `file=@${file}`];
  for (const [name, value] of Object.entries(fields)) args.push('-F', `${name}=${value}`);
  const { stdout } = await promisify(execFile)('curl', [...args, url], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout);
}

/** `POST /datasets/upload` of `file` with curl; answers the dataset. */
export function curlUpload(base, token, workspaceId, file, name) {
  return curlPostFile(`${base}/datasets/upload?workspace_id=${workspaceId}`, token, file, name ? { name } : {});
}
