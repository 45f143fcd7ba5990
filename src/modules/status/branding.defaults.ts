/** What GET /branding serves until a system admin saves a branding of their own (version 0). */

const DEFAULT_LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" role="img" aria-label="Evaluation Workspace">' +
  '<rect width="64" height="64" rx="14" fill="#1E3A8A"/>' +
  '<rect x="14" y="34" width="8" height="16" rx="2" fill="#FFFFFF"/>' +
  '<rect x="28" y="24" width="8" height="26" rx="2" fill="#FFFFFF"/>' +
  '<rect x="42" y="14" width="8" height="36" rx="2" fill="#F59E0B"/>' +
  '</svg>';

const DEFAULT_LOGO_URL = `data:image/svg+xml;base64,${Buffer.from(DEFAULT_LOGO_SVG).toString('base64')}`;

/** The stored shape of the `branding` setting (the response minus updated_at and version). */
export interface BrandingValue {
  product_name: string;
  tagline: string | null;
  primary_color: string;
  accent_color: string;
  logo_url: string;
  favicon_url: string | null;
  support_url: string | null;
}

export const DEFAULT_BRANDING: Readonly<BrandingValue> = Object.freeze({
  product_name: 'Evaluation Workspace',
  tagline: 'Prove your LLM application is good enough, release after release.',
  primary_color: '#1E3A8A',
  accent_color: '#F59E0B',
  logo_url: DEFAULT_LOGO_URL,
  favicon_url: DEFAULT_LOGO_URL,
  support_url: null,
});
