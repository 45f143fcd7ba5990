import type { ProjectTemplate } from './template.types.js';

export const ragQuestionAnswering: ProjectTemplate = {
  name: 'rag-question-answering',
  title: 'RAG question answering',
  description:
    'An assistant that answers questions from a document collection through retrieval-augmented generation. ' +
    'Covers the kinds of questions asked, whether the corpus can answer them, where the answer lives and how the question is phrased, ' +
    'so faithfulness, retrieval quality and refusals on unanswerable questions are all measured.',
  use_case: 'rag_qa',
  dimensions: [
    {
      name: 'question_type',
      description: 'The reasoning the question needs.',
      values: [
        { value: 'factoid', description: 'A single fact: a name, a date, a number, a setting.' },
        { value: 'definition', description: 'What a term, concept or product feature means.' },
        { value: 'procedural', description: 'How to do something: ordered steps.' },
        { value: 'comparison', description: 'Differences or trade-offs between two or more things.' },
        { value: 'multi_hop', description: 'Needs facts from several passages combined.' },
        { value: 'numerical_reasoning', description: 'Needs a calculation over figures found in the sources.' },
        { value: 'yes_no', description: 'A closed question whose answer must still be justified from the sources.' },
        { value: 'enumeration', description: 'Asks for a complete list (all supported formats, every limit).' },
        { value: 'temporal', description: 'Depends on dates or versions: what changed, what applied when.' },
      ],
    },
    {
      name: 'answerability',
      description: 'Whether and how the corpus answers the question.',
      values: [
        { value: 'single_passage', description: 'One retrieved passage holds the whole answer.' },
        { value: 'multi_passage', description: 'The answer is spread over several passages or documents.' },
        { value: 'partial', description: 'The corpus answers only part; the assistant must say what is missing.' },
        {
          value: 'unanswerable',
          description: 'The corpus does not hold the answer; the right output is a refusal, not a guess.',
        },
        {
          value: 'conflicting_sources',
          description: 'Sources disagree; the assistant must notice and say so, or prefer the authoritative one.',
        },
      ],
    },
    {
      name: 'source_type',
      description: 'The kind of document the answer comes from.',
      values: [
        { value: 'product_documentation', description: 'Manuals, guides and reference pages.' },
        {
          value: 'policy_document',
          description: 'Terms, internal policies and compliance texts with precise wording.',
        },
        { value: 'knowledge_base_article', description: 'Support articles and how-tos.' },
        { value: 'table', description: 'Tabular data (price lists, specifications) flattened into text.' },
        { value: 'faq', description: 'Short question-answer pairs.' },
        { value: 'release_notes', description: 'Change logs, where recency matters.' },
      ],
    },
    {
      name: 'query_phrasing',
      description: 'How the user writes the question; retrieval is sensitive to it.',
      values: [
        { value: 'well_formed', description: 'A complete, grammatical question.' },
        { value: 'keywords_only', description: 'A few search terms without a sentence.' },
        {
          value: 'conversational_follow_up',
          description: 'Refers back to an earlier turn ("and what about the other one?").',
        },
        { value: 'misspelled', description: 'Typos or wrong product names.' },
        { value: 'jargon_heavy', description: "Domain or internal jargon that may not match the documents' wording." },
        { value: 'verbose', description: 'A long message with background, of which the question is a small part.' },
      ],
    },
    {
      name: 'difficulty',
      description: 'How hard the question is for a knowledgeable person with the documents at hand.',
      values: [
        { value: 'easy', description: 'Answer found by reading one obvious section.' },
        { value: 'medium', description: 'Needs searching and some interpretation.' },
        { value: 'hard', description: 'Needs combining sections or careful reading of exceptions.' },
        { value: 'expert', description: 'Needs domain expertise to interpret the sources correctly.' },
      ],
    },
    {
      name: 'language',
      description: 'The language of the question (the corpus may be in another one).',
      values: [
        { value: 'en', description: 'English.' },
        { value: 'de', description: 'German.' },
        { value: 'fr', description: 'French.' },
        { value: 'es', description: 'Spanish.' },
        { value: 'cross_lingual', description: 'Question and source documents are in different languages.' },
      ],
    },
    {
      name: 'content_freshness',
      description: 'How recently the content that answers the question changed.',
      values: [
        { value: 'stable', description: 'Content that has not changed for a long time.' },
        {
          value: 'recently_updated',
          description: 'Content changed recently; an older cached or embedded copy would be wrong.',
        },
        { value: 'superseded', description: 'An old version still exists in the corpus next to the current one.' },
      ],
    },
  ],
  suggested_metrics: [
    {
      name: 'faithfulness',
      kind: 'judged',
      description: 'Every claim in the answer is supported by the retrieved context (no hallucination).',
      threshold: { operator: '>=', value: 0.9 },
    },
    {
      name: 'answer_relevance',
      kind: 'judged',
      description: 'The answer addresses the question asked, without padding.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'answer_correctness',
      kind: 'judged',
      description: 'Agrees with the expected answer.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'context_recall',
      kind: 'judged',
      description: 'The retrieved passages contain what the expected answer needs.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'context_precision',
      kind: 'judged',
      description: 'Relevant passages are ranked above irrelevant ones.',
      threshold: { operator: '>=', value: 0.7 },
    },
    {
      name: 'citation_accuracy',
      kind: 'deterministic',
      description: 'Cited sources are among the expected source documents.',
      threshold: { operator: '>=', value: 0.9 },
    },
    {
      name: 'refusal_accuracy',
      kind: 'judged',
      description: 'Declines unanswerable questions and answers answerable ones.',
      threshold: { operator: '>=', value: 0.9 },
    },
    {
      name: 'latency_p95_ms',
      kind: 'deterministic',
      description: '95th-percentile end-to-end time, retrieval included, in milliseconds.',
      threshold: { operator: '<=', value: 6000 },
    },
  ],
};
