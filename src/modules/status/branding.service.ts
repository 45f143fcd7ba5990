import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal } from '#libs/auth/roles.js';
import { type IfMatchPrecondition, type IfNoneMatchCondition, strongEtag } from '#libs/common/etag.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { type BrandingValue } from './branding.defaults.js';
import type { BrandingResponse, UpdateBrandingRequest } from './dto/branding.dto.js';
import { SettingsRepository } from './settings.repository.js';
import { toBrandingResponse } from './status.mapper.js';

export const BRANDING_KEY = 'branding';

export interface BrandingRepresentation {
  body: BrandingResponse;
  etag: string;
}

/** Strong: it is computed over the exact representation, so any byte that changes changes it. */
function represent(body: BrandingResponse): BrandingRepresentation {
  return { body, etag: strongEtag(BRANDING_KEY, JSON.stringify(body)) };
}

@Injectable()
export class BrandingService {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly transactions: TransactionRunner,
    private readonly audit: AuditService,
  ) {}

  async current(): Promise<BrandingRepresentation> {
    return represent(toBrandingResponse(await this.settings.find(BRANDING_KEY)));
  }

  /** The current branding, or `notModified` when the caller's If-None-Match names it. */
  async read(ifNoneMatch: IfNoneMatchCondition): Promise<BrandingRepresentation & { notModified: boolean }> {
    const current = await this.current();
    return { ...current, notModified: ifNoneMatch.matches(current.etag) };
  }

  /** Replaces the whole branding; with If-Match, only when nobody changed it since the caller read it (else 412). */
  async replace(
    input: UpdateBrandingRequest,
    actor: Principal,
    ifMatch: IfMatchPrecondition,
  ): Promise<BrandingRepresentation> {
    const value: BrandingValue = {
      product_name: input.product_name.trim(),
      tagline: input.tagline?.trim() || null,
      primary_color: input.primary_color.toUpperCase(),
      accent_color: input.accent_color.toUpperCase(),
      logo_url: input.logo_url,
      favicon_url: input.favicon_url ?? null,
      support_url: input.support_url ?? null,
    };
    const saved = await this.transactions.run(async () => {
      await this.settings.lock(BRANDING_KEY);
      const before = toBrandingResponse(await this.settings.find(BRANDING_KEY));
      ifMatch.check(represent(before).etag);
      const setting = await this.settings.write(BRANDING_KEY, { ...value }, actor.userId);
      const changed = (Object.keys(value) as Array<keyof BrandingValue>).filter(
        (field) => before[field] !== value[field],
      );
      await this.audit.record({
        actor,
        action: 'branding.updated',
        targetType: 'settings',
        targetId: BRANDING_KEY,
        details: { version: setting.version, changed_fields: changed },
      });
      return setting;
    });
    return represent(toBrandingResponse(saved));
  }
}
