import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

const user = (text: string) => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] });

/** Prompts for the questions teams bring: a regression between two runs, failures in production. */
export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    'investigate_regression',
    {
      title: 'Investigate a regression',
      description: 'Which rows regressed between two runs, whether it is significant, and why',
      argsSchema: z.object({
        base_run_id: z.string().describe('The earlier run (e.g. last release)'),
        candidate_run_id: z.string().describe('The run to judge'),
      }),
    },
    ({ base_run_id, candidate_run_id }) =>
      user(
        [
          `Investigate whether run ${candidate_run_id} regressed against run ${base_run_id}.`,
          '1. Call compare_runs with both ids. Report, per metric and for the row verdict, the change in mean with its 95% interval, the adjusted p-value and whether it is significant; say plainly which changes are noise.',
          '2. For up to five of the regressed rows it lists, call show_diff_row and read both outputs: what did the candidate get wrong that the base got right? Group the rows by cause.',
          `3. Call explain_gate for ${candidate_run_id} and say which checks fail and why.`,
          '4. Conclude: is the regression real, which rows and causes, and what to change or test next. Cite row ids.',
        ].join('\n'),
      ),
  );

  server.registerPrompt(
    'triage_production_failures',
    {
      title: 'Triage production failures',
      description: 'Find failing production traces, group them by cause, and propose test cases',
      argsSchema: z.object({
        dataset_id: z.string().describe('The trace dataset (find_datasets with kind "traces")'),
        focus: z.string().optional().describe('Optional: a model, tag or feature to narrow to'),
      }),
    },
    ({ dataset_id, focus }) =>
      user(
        [
          `Triage recent failures in the production traces of dataset ${dataset_id}${focus ? `, focusing on ${focus}` : ''}.`,
          '1. Call search_traces three ways, newest first: has_error true; score_passed false (failing online scores); feedback_value "false" (thumbs down). Note the totals.',
          '2. For a few traces of each, call show_trace and find where they go wrong: a tool error, a loop, a bad retrieval, a wrong answer.',
          '3. Group the failures by cause, with counts and example trace ids, most frequent first.',
          '4. For each cause propose a test case (an input and what a good answer must do) the team can add to a test-case dataset, and the metric that would catch it.',
        ].join('\n'),
      ),
  );
}
