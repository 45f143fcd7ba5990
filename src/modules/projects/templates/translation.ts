import type { ProjectTemplate } from './template.types.js';

export const translation: ProjectTemplate = {
  name: 'translation',
  title: 'Translation',
  description:
    'Machine translation of product, support and business content. Covers language pairs, domains, register and the content ' +
    '(idioms, names, numbers, placeholders) where translations break, so adequacy, terminology and format preservation are measured.',
  use_case: 'translation',
  dimensions: [
    {
      name: 'language_pair',
      description: 'Source and target language.',
      values: [
        { value: 'en_de', description: 'English to German.' },
        { value: 'en_fr', description: 'English to French.' },
        { value: 'en_es', description: 'English to Spanish.' },
        { value: 'en_ja', description: 'English to Japanese.' },
        { value: 'en_zh', description: 'English to Simplified Chinese.' },
        { value: 'de_en', description: 'German to English.' },
        { value: 'fr_en', description: 'French to English.' },
        { value: 'es_en', description: 'Spanish to English.' },
      ],
    },
    {
      name: 'content_domain',
      description: 'What the text is for.',
      values: [
        { value: 'marketing', description: 'Persuasive copy where tone matters more than literal wording.' },
        { value: 'legal', description: 'Terms and contracts where meaning must be preserved exactly.' },
        { value: 'medical', description: 'Patient or clinical information where errors are harmful.' },
        { value: 'software_ui', description: 'Interface strings with length limits and placeholders.' },
        { value: 'customer_support', description: 'Help articles and replies to customers.' },
        { value: 'literary', description: 'Narrative text with style and voice.' },
      ],
    },
    {
      name: 'register',
      description: 'The formality the target text must have.',
      values: [
        { value: 'formal', description: 'Polite forms (Sie, vous, usted; keigo).' },
        { value: 'informal', description: 'Familiar forms and everyday wording.' },
        { value: 'technical', description: 'Precise terminology, neutral tone.' },
      ],
    },
    {
      name: 'content_feature',
      description: 'A feature of the source that translation often gets wrong.',
      values: [
        { value: 'plain', description: 'Nothing special.' },
        { value: 'idioms', description: 'Idioms and figures of speech that must not be translated literally.' },
        {
          value: 'named_entities',
          description: 'Product, person and place names that stay as they are or follow a glossary.',
        },
        {
          value: 'numbers_units_dates',
          description: 'Numbers, currencies, units and dates with locale-specific formats.',
        },
        {
          value: 'placeholders_markup',
          description: 'Variables ({name}, %s) and HTML or Markdown that must survive intact.',
        },
        { value: 'ambiguous_terms', description: 'Words whose translation depends on context.' },
      ],
    },
    {
      name: 'segment_length',
      description: 'How much text is translated at once.',
      values: [
        { value: 'ui_string', description: 'A label or button of a few words.' },
        { value: 'sentence', description: 'One sentence.' },
        { value: 'paragraph', description: 'A paragraph, where cross-sentence references matter.' },
        { value: 'document', description: 'A full document with consistent terminology throughout.' },
      ],
    },
  ],
  suggested_metrics: [
    {
      name: 'comet',
      kind: 'deterministic',
      description: 'Learned translation-quality score against the reference (COMET).',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'chrf',
      kind: 'deterministic',
      description: 'Character n-gram F-score against the reference.',
      threshold: { operator: '>=', value: 0.6 },
    },
    {
      name: 'bleu',
      kind: 'deterministic',
      description: 'Word n-gram overlap with the reference; informative, tracked over releases.',
      threshold: null,
    },
    {
      name: 'adequacy',
      kind: 'judged',
      description: 'The translation carries the full meaning of the source.',
      threshold: { operator: '>=', value: 0.85 },
    },
    {
      name: 'fluency',
      kind: 'judged',
      description: 'Reads naturally in the target language and register.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'terminology_accuracy',
      kind: 'deterministic',
      description: 'Glossary terms are translated as the glossary says.',
      threshold: { operator: '>=', value: 0.95 },
    },
    {
      name: 'placeholder_preservation',
      kind: 'deterministic',
      description: 'Placeholders and markup of the source all appear unchanged in the target.',
      threshold: { operator: '>=', value: 1 },
    },
  ],
};
