import { Injectable } from '@nestjs/common';
import { DETERMINISTIC_METRICS } from '../../../libs/evaluation/deterministic-metrics.js';
import { BUILTIN_METRICS } from '../../../libs/evaluation/metric-catalogue.js';
import type { WorkspaceMetricCatalogue } from './dto/metric-catalogue.dto.js';

/** The metrics a workspace can score with: the built-ins now; its own metric configs join them with issue 5. */
@Injectable()
export class MetricCatalogueService {
  catalogue(workspaceId: string): WorkspaceMetricCatalogue {
    const deterministic = new Map(DETERMINISTIC_METRICS.map((m) => [m.name, m]));
    return {
      workspace_id: workspaceId,
      metrics: BUILTIN_METRICS.map((m) => {
        const impl = deterministic.get(m.name);
        return { name: m.name, kind: m.kind, description: m.description, source: 'builtin' as const, requires: m.requires, better: impl?.better ?? null, params_schema: impl?.paramsSchema ?? null };
      }),
    };
  }
}
