/** Six questions of capitals: the dataset the runs family's tests run a SUT over. */
export const CAPITAL_ROWS = [
  { input: 'capital of France?', expected_output: 'Paris' },
  { input: 'capital of Italy?', expected_output: 'Rome' },
  { input: 'capital of Spain?', expected_output: 'Madrid' },
  { input: 'capital of Peru?', expected_output: 'Lima' },
  { input: 'capital of Chile?', expected_output: 'Santiago' },
  { input: 'capital of Fiji?', expected_output: 'Suva' },
];

/**
 * What the SUT under test answers for each country (a copy to change per test): right for most
 * rows, wrong for Peru and Chile, and a 500 (null) for Fiji.
 */
export const capitalAnswers = (): Record<string, string | null> => ({
  France: 'Paris',
  Italy: 'Rome',
  Spain: 'Madrid',
  Peru: 'Cusco',
  Chile: 'Valparaiso',
  Fiji: null,
});

/** The eval config the runs family's tests score with: exact_match gating at 0.5, f1, latency informational. */
export const CAPITALS_EVAL_CONFIG = {
  name: 'gate',
  metrics: [
    { config_name: 'exact_match', min_pass_rate: 0.5 },
    { config_name: 'f1' },
    { config_name: 'latency', gating: false },
  ],
  pass_rule: { min_pass_rate: 0.5 },
};
