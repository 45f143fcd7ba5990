/**
 * Rules for the images and links of the branding. Logos are shown to every user of the UI,
 * so an image is either an https URL or a small inline data URL whose bytes really are the
 * declared image type (and, for SVG, free of script).
 */

/** Largest decoded inline image (logo_url, favicon_url): 256 KiB. */
export const MAX_INLINE_IMAGE_BYTES = 256 * 1024;
/** Longest https URL accepted for an image or the support link. */
export const MAX_URL_LENGTH = 2048;
/** The longest image URL: a data URL of the longest media type holding MAX_INLINE_IMAGE_BYTES in base64. */
export const MAX_IMAGE_URL_LENGTH = 'data:image/svg+xml;base64,'.length + 4 * Math.ceil(MAX_INLINE_IMAGE_BYTES / 3);

export const INLINE_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/svg+xml'] as const;

const DATA_URL = /^data:(image\/(?:png|jpeg|svg\+xml));base64,([A-Za-z0-9+/]*={0,2})$/;
const SVG_ACTIVE_CONTENT = /<script\b|<foreignObject\b|javascript:|\son[a-z]+\s*=|<iframe\b|<embed\b|<object\b/i;

/** Why `value` is not an acceptable https URL, or null when it is. */
export function httpsUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:') return 'must be an https URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not carry credentials';
  return null;
}

function looksLike(mediaType: string, bytes: Buffer): boolean {
  switch (mediaType) {
    case 'image/png':
      return bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    case 'image/jpeg':
      return bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
    default:
      return /<svg[\s>]/i.test(bytes.toString('utf8'));
  }
}

/**
 * Why `value` is not an acceptable image URL (https, or data:image/png|jpeg|svg+xml;base64
 * up to MAX_INLINE_IMAGE_BYTES), or null when it is.
 */
export function imageUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.startsWith('data:')) return httpsUrlProblem(value);
  if (value.length > MAX_IMAGE_URL_LENGTH)
    return `must be at most ${MAX_IMAGE_URL_LENGTH} characters (an inline image of at most ${MAX_INLINE_IMAGE_BYTES} bytes)`;
  const match = DATA_URL.exec(value);
  if (!match)
    return `must be an https URL or a data URL of the form data:<${INLINE_IMAGE_TYPES.join('|')}>;base64,<data>`;
  const [, mediaType, data] = match;
  if (data.length === 0 || data.length % 4 !== 0) return 'has base64 data of the wrong length';
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length > MAX_INLINE_IMAGE_BYTES)
    return `must decode to at most ${MAX_INLINE_IMAGE_BYTES} bytes (got ${bytes.length})`;
  if (!looksLike(mediaType, bytes)) return `does not hold ${mediaType} data (its bytes are another format)`;
  if (mediaType === 'image/svg+xml' && SVG_ACTIVE_CONTENT.test(bytes.toString('utf8'))) {
    return 'is an SVG with script, event handlers or embedded content, which are not allowed';
  }
  return null;
}

/** Why `value` is not an acceptable support link (https URL or mailto: address), or null when it is. */
export function supportUrlProblem(value: unknown): string | null {
  if (typeof value === 'string' && value.startsWith('mailto:')) {
    return /^mailto:[^\s@/]+@[^\s@/]+\.[^\s@/]+$/.test(value) && value.length <= 320
      ? null
      : 'must be mailto:<email address>';
  }
  const problem = httpsUrlProblem(value);
  return problem ? `${problem} (or mailto:<email address>)` : null;
}
