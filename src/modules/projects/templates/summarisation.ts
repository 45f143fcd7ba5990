import type { ProjectTemplate } from './template.types.js';

export const summarisation: ProjectTemplate = {
  name: 'summarisation',
  title: 'Summarisation',
  description:
    'Summaries of documents, transcripts and threads. Covers what is summarised, how long it is, the style and audience asked for, ' +
    'and the content that trips summarisers up (numbers, many speakers, contradictions), so faithfulness and coverage are measured where they fail.',
  use_case: 'summarisation',
  dimensions: [
    {
      name: 'document_type',
      description: 'What is being summarised.',
      values: [
        { value: 'news_article', description: 'Journalistic text with a lead and supporting paragraphs.' },
        { value: 'meeting_transcript', description: 'Several speakers, decisions and action items, spoken language.' },
        { value: 'support_thread', description: 'A back-and-forth between a customer and agents.' },
        { value: 'contract', description: 'Legal text where obligations, parties and dates must be exact.' },
        { value: 'research_paper', description: 'Methods, results and limitations with technical vocabulary.' },
        { value: 'financial_report', description: 'Figures, periods and comparisons that must stay correct.' },
        {
          value: 'email_thread',
          description: 'Replies and quotes of earlier messages, with the latest state mattering most.',
        },
        { value: 'product_reviews', description: 'Many short opinions to be aggregated into themes and sentiment.' },
      ],
    },
    {
      name: 'document_length',
      description: 'Length of the input.',
      values: [
        { value: 'short', description: 'Under 500 words.' },
        { value: 'medium', description: '500 to 2,000 words.' },
        { value: 'long', description: '2,000 to 8,000 words.' },
        { value: 'very_long', description: "Over 8,000 words; may exceed the model's context and need chunking." },
      ],
    },
    {
      name: 'summary_style',
      description: 'The form of summary requested.',
      values: [
        { value: 'executive_brief', description: 'Three to five sentences with the conclusion first.' },
        { value: 'bullet_points', description: 'Key points as a list.' },
        { value: 'abstractive_paragraph', description: "One coherent paragraph in the model's own words." },
        { value: 'action_items', description: 'Decisions, owners and deadlines only.' },
        { value: 'headline', description: 'One line.' },
      ],
    },
    {
      name: 'audience',
      description: 'Who reads the summary.',
      values: [
        { value: 'executive', description: 'Wants outcomes and decisions, no detail.' },
        { value: 'domain_expert', description: 'Expects precise terminology and specifics.' },
        { value: 'general_public', description: 'Needs plain language and no jargon.' },
        { value: 'internal_team', description: 'Shares context; wants what changed and what to do.' },
      ],
    },
    {
      name: 'domain',
      description: 'Subject area, which sets how costly an error is.',
      values: [
        { value: 'general', description: 'Everyday topics.' },
        { value: 'legal', description: 'Contracts, regulations, case law.' },
        { value: 'medical', description: 'Clinical notes, studies, patient information.' },
        { value: 'finance', description: 'Earnings, markets, accounting.' },
        { value: 'technical', description: 'Engineering documents, incident reports, specifications.' },
      ],
    },
    {
      name: 'language',
      description: 'Language of the input and of the summary.',
      values: [
        { value: 'en', description: 'English in, English out.' },
        { value: 'de', description: 'German in, German out.' },
        { value: 'fr', description: 'French in, French out.' },
        { value: 'es', description: 'Spanish in, Spanish out.' },
        { value: 'cross_lingual', description: 'The summary is asked for in a different language from the input.' },
      ],
    },
    {
      name: 'content_challenge',
      description: 'A property of the input that commonly causes unfaithful summaries.',
      values: [
        { value: 'none', description: 'Straightforward content.' },
        { value: 'dense_numbers', description: 'Many figures, units and dates that must be carried over exactly.' },
        { value: 'many_speakers', description: 'Statements must be attributed to the right person.' },
        {
          value: 'contradictions',
          description: 'The input revises or contradicts itself; the summary must reflect the final position.',
        },
        { value: 'quotes', description: 'Direct quotes that must not be altered or misattributed.' },
      ],
    },
  ],
  suggested_metrics: [
    {
      name: 'factual_consistency',
      kind: 'judged',
      description: 'Every statement in the summary is supported by the source.',
      threshold: { operator: '>=', value: 0.9 },
    },
    {
      name: 'coverage',
      kind: 'judged',
      description: 'The key points of the reference summary (or source) are present.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'conciseness',
      kind: 'judged',
      description: 'No redundancy or filler for the requested style.',
      threshold: { operator: '>=', value: 0.7 },
    },
    {
      name: 'fluency',
      kind: 'judged',
      description: 'Reads naturally in the target language.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'rouge_l',
      kind: 'deterministic',
      description: 'Longest-common-subsequence overlap with the reference summary; informative, tracked over releases.',
      threshold: null,
    },
    {
      name: 'compression_ratio',
      kind: 'deterministic',
      description: 'Summary length divided by input length; informative.',
      threshold: null,
    },
    {
      name: 'unsupported_entities',
      kind: 'deterministic',
      description: 'Named entities or numbers in the summary that do not occur in the source.',
      threshold: { operator: '<=', value: 0 },
    },
  ],
};
