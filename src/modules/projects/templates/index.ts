import { agenticWorkflow } from './agentic-workflow.js';
import { classificationExtraction } from './classification-extraction.js';
import { codeAssistant } from './code-assistant.js';
import { customerSupportAssistant } from './customer-support-assistant.js';
import { ragQuestionAnswering } from './rag-question-answering.js';
import { summarisation } from './summarisation.js';
import type { ProjectTemplate } from './template.types.js';
import { translation } from './translation.js';

export type { ProjectTemplate, TemplateDimension, TemplateDimensionValue, TemplateMetric } from './template.types.js';

/** The built-in project templates, in the order GET /templates lists them. */
export const PROJECT_TEMPLATES: readonly ProjectTemplate[] = [
  customerSupportAssistant,
  ragQuestionAnswering,
  summarisation,
  codeAssistant,
  agenticWorkflow,
  translation,
  classificationExtraction,
];
