import { Injectable } from '@nestjs/common';
import { DomainError } from '#libs/common/domain-error.js';
import type { TemplateDetail, TemplateSummary } from './dto/template.dto.js';
import { ProjectErrors } from './projects.errors.js';
import { PROJECT_TEMPLATES } from './templates/index.js';
import { toDetail, toSummary } from './projects.mapper.js';

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
