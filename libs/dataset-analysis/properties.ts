/** The properties each analysis computes (GET /analysis/properties/{kind}); row-level ones can be filtered with the /query paths. */
export interface AnalysisProperty {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean';
  level: 'row' | 'column' | 'version';
  description: string;
}

export const TEXT_PROPERTIES: readonly AnalysisProperty[] = [
  {
    name: 'chars',
    type: 'integer',
    level: 'row',
    description: 'Length of the value in characters (per text column: `<column>.chars`)',
  },
  { name: 'words', type: 'integer', level: 'row', description: 'Words (runs of letters and digits)' },
  {
    name: 'tokens',
    type: 'integer',
    level: 'row',
    description: 'Tokens under cl100k_base, the GPT-4 / GPT-3.5 tokenizer',
  },
  {
    name: 'language',
    type: 'string',
    level: 'row',
    description: 'ISO 639-1 language detected (tinyld); null under 12 characters or when undetected',
  },
  {
    name: 'flesch_reading_ease',
    type: 'number',
    level: 'row',
    description: 'Flesch reading ease (English text only; higher is easier)',
  },
  { name: 'empty', type: 'boolean', level: 'row', description: 'Missing, or only whitespace' },
  { name: 'near_empty', type: 'boolean', level: 'row', description: 'Not empty but fewer than 3 words' },
  { name: 'empty_rate', type: 'number', level: 'column', description: 'Share of rows whose value is empty' },
  { name: 'near_empty_rate', type: 'number', level: 'column', description: 'Share of rows whose value is near-empty' },
  { name: 'languages', type: 'string', level: 'column', description: 'Languages detected with their count and share' },
  { name: 'vocabulary_size', type: 'integer', level: 'column', description: 'Distinct lower-case words' },
  {
    name: 'top_terms',
    type: 'string',
    level: 'column',
    description: 'Most frequent words, stopwords of the detected languages removed',
  },
  {
    name: 'chars.histogram',
    type: 'integer',
    level: 'column',
    description:
      'Distribution of lengths in characters (10 bins), likewise words, tokens and flesch_reading_ease, each with count, mean, median, p90, min, max',
  },
];

export const ANNOTATION_PROPERTIES: readonly AnalysisProperty[] = [
  { name: '<label column>', type: 'string', level: 'row', description: "The row's label in each label column" },
  { name: 'labelled', type: 'integer', level: 'row', description: 'How many label columns labelled the row' },
  {
    name: 'agree',
    type: 'boolean',
    level: 'row',
    description: 'Whether every label column that labelled the row gave the same label (null with fewer than two)',
  },
  { name: 'distribution', type: 'string', level: 'column', description: 'Labels with count and share' },
  { name: 'missing_rate', type: 'number', level: 'column', description: 'Share of rows without a label' },
  {
    name: 'by_dimension',
    type: 'string',
    level: 'column',
    description: 'The label distribution per value of each dimension of the dataset',
  },
  {
    name: 'cohen_kappa',
    type: 'number',
    level: 'version',
    description: 'Agreement of two label columns beyond chance (Cohen)',
  },
  {
    name: 'fleiss_kappa',
    type: 'number',
    level: 'version',
    description: 'Agreement of three or more label columns beyond chance (Fleiss)',
  },
  {
    name: 'interpretation',
    type: 'string',
    level: 'version',
    description: 'Landis & Koch reading of the kappa: poor, slight, fair, moderate, substantial, almost perfect',
  },
];

export const VISUAL_PROPERTIES: readonly AnalysisProperty[] = [
  { name: 'x', type: 'number', level: 'row', description: 'First coordinate of the row on the 2-D map, in [-1, 1]' },
  { name: 'y', type: 'number', level: 'row', description: 'Second coordinate, in [-1, 1]' },
  { name: 'cluster', type: 'integer', level: 'row', description: "The row's cluster (0 is the largest)" },
  {
    name: 'projection',
    type: 'string',
    level: 'version',
    description: 'How the map was made (pca: the two principal components of the embeddings)',
  },
  {
    name: 'embedder',
    type: 'string',
    level: 'version',
    description: 'The workspace embedder that embedded the column',
  },
  {
    name: 'clusters',
    type: 'string',
    level: 'version',
    description: 'Clusters with size and name (their distinctive terms)',
  },
];
