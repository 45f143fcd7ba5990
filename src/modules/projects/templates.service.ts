import { Injectable } from '@nestjs/common';
import { DomainError } from '../../../libs/common/domain-error.js';
import type { TemplateDetail, TemplateSummary } from './dto/template.dto.js';
import { ProjectErrors } from './projects.errors.js';
import { PROJECT_TEMPLATES, type ProjectTemplate } from './templates/index.js';

function toSummary(t: ProjectTemplate): TemplateSummary {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    use_case: t.use_case,
    dimension_count: t.dimensions.length,
  };
}

/** Deep copies, so a caller editing a response (before passing it to project creation) cannot touch the catalogue. */
function toDetail(t: ProjectTemplate): TemplateDetail {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    use_case: t.use_case,
    dimensions: t.dimensions.map((d) => ({
      name: d.name,
      description: d.description,
      values: d.values.map((v) => ({ value: v.value, description: v.description })),
    })),
    suggested_metrics: t.suggested_metrics.map((m) => ({
      name: m.name,
      kind: m.kind,
      description: m.description,
      threshold: m.threshold ? { ...m.threshold } : null,
    })),
  };
}

@Injectable()
export class TemplatesService {
  list(): TemplateSummary[] {
    return PROJECT_TEMPLATES.map(toSummary);
  }

  get(name: string): TemplateDetail {
    const template = PROJECT_TEMPLATES.find((t) => t.name === name);
    if (!template) {
      const available = PROJECT_TEMPLATES.map((t) => t.name);
      throw new DomainError(
        ProjectErrors.template_not_found,
        `No template is named '${name.slice(0, 100)}'; available templates: ${available.join(', ')}`,
        { available },
      );
    }
    return toDetail(template);
  }
}
