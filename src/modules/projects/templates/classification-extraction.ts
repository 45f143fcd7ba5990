import type { ProjectTemplate } from './template.types.js';

export const classificationExtraction: ProjectTemplate = {
  name: 'classification-extraction',
  title: 'Classification and extraction',
  description:
    'Labelling text and pulling structured fields out of it: ticket routing, sentiment, entity and form extraction into JSON. ' +
    'Covers the task, the source documents, rare labels and noisy inputs, so accuracy per label and schema validity are measured.',
  use_case: 'classification_extraction',
  dimensions: [
    {
      name: 'task',
      description: 'What the model must produce.',
      values: [
        { value: 'single_label', description: 'Exactly one label from a fixed set.' },
        { value: 'multi_label', description: 'Any number of labels from a fixed set.' },
        { value: 'entity_extraction', description: 'Spans such as names, dates, amounts and products.' },
        { value: 'form_extraction', description: 'A fixed set of fields into a JSON object.' },
        { value: 'sentiment', description: 'Polarity and strength of opinion.' },
        { value: 'routing', description: 'The queue or team that should handle the input.' },
      ],
    },
    {
      name: 'input_source',
      description: 'Where the text comes from.',
      values: [
        { value: 'email', description: 'Emails with signatures, quotes and disclaimers.' },
        { value: 'support_ticket', description: 'Tickets with a subject line and free text.' },
        { value: 'invoice_receipt', description: 'Invoices and receipts, often OCR output.' },
        { value: 'contract', description: 'Long legal documents with clauses to find.' },
        { value: 'chat_message', description: 'Short, informal messages.' },
        { value: 'web_form', description: 'Semi-structured form submissions.' },
      ],
    },
    {
      name: 'label_frequency',
      description: 'How common the expected label or field is in real traffic.',
      values: [
        { value: 'frequent', description: 'One of the common labels.' },
        { value: 'rare', description: 'A label seen in under 2% of traffic.' },
        {
          value: 'none_applies',
          description: 'No label fits or the field is absent; the model must say so instead of guessing.',
        },
      ],
    },
    {
      name: 'input_quality',
      description: 'How clean the input is.',
      values: [
        { value: 'clean', description: 'Well-formed text.' },
        { value: 'ocr_noise', description: 'Character errors and broken layout from scanning.' },
        { value: 'typos_slang', description: 'Misspellings, abbreviations and slang.' },
        { value: 'truncated', description: 'Cut off before the end.' },
        { value: 'mixed_language', description: 'Several languages in one input.' },
      ],
    },
    {
      name: 'output_format',
      description: 'The shape the answer must have.',
      values: [
        { value: 'json_schema', description: 'A JSON object conforming to a given schema.' },
        { value: 'label', description: 'A bare label string.' },
        { value: 'label_list', description: 'A JSON array of labels.' },
        { value: 'spans', description: 'Extracted spans with their character offsets.' },
      ],
    },
    {
      name: 'difficulty',
      description: 'How clear-cut the correct answer is.',
      values: [
        { value: 'easy', description: 'Annotators agree at once.' },
        { value: 'borderline', description: 'Between two labels; guidelines decide.' },
        { value: 'adversarial', description: 'Misleading keywords that point to the wrong label.' },
      ],
    },
  ],
  suggested_metrics: [
    {
      name: 'accuracy',
      kind: 'deterministic',
      description: 'Exact match of the label with the expected one.',
      threshold: { operator: '>=', value: 0.9 },
    },
    {
      name: 'macro_f1',
      kind: 'deterministic',
      description: 'F1 averaged over labels, so rare labels weigh as much as frequent ones.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'field_exact_match',
      kind: 'deterministic',
      description: 'Share of extracted fields equal to the expected values.',
      threshold: { operator: '>=', value: 0.9 },
    },
    {
      name: 'json_validity',
      kind: 'deterministic',
      description: 'Output parses as JSON.',
      threshold: { operator: '>=', value: 0.99 },
    },
    {
      name: 'schema_adherence',
      kind: 'deterministic',
      description: 'Output conforms to the requested JSON schema.',
      threshold: { operator: '>=', value: 0.99 },
    },
    {
      name: 'abstention_accuracy',
      kind: 'deterministic',
      description: 'Answers "none" exactly when no label or field applies.',
      threshold: { operator: '>=', value: 0.85 },
    },
  ],
};
