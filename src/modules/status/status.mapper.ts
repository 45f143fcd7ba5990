import { DEFAULT_BRANDING, type BrandingValue } from './branding.defaults.js';
import type { BrandingResponse } from './dto/branding.dto.js';
import type { SettingEntity } from './entities/setting.entity.js';

/** Stored values are merged over the defaults so a field added in a later release has a value. */
export function toBrandingResponse(setting: SettingEntity | null): BrandingResponse {
  const stored = (setting?.value ?? {}) as Partial<BrandingValue>;
  return {
    ...DEFAULT_BRANDING,
    ...stored,
    updated_at: setting ? setting.updatedAt.toISOString() : null,
    version: setting?.version ?? 0,
  };
}
