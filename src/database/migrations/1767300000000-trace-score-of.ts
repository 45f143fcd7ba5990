import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The traces family publishes a trace's score to the query language (docs/query-language.md#scores):
 * `trace_score_of(dataset, trace_id, evaluator, metric)` answers the newest score record of that
 * evaluator's metric on the trace (the highest evaluator version, then the latest scored) as
 * `{score, passed, label}`, or no row. The datasets family calls it inside its row statements
 * without naming trace_scores (docs/architecture.md#what-families-offer-each-other). One
 * `LANGUAGE sql STABLE` SELECT, neither STRICT nor SECURITY DEFINER: called in a FROM clause it is
 * inlined into the caller's plan, where the index below finds the row by its key.
 */
export class TraceScoreOf1767300000000 implements MigrationInterface {
  name = 'TraceScoreOf1767300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX trace_scores_of_idx ON trace_scores (dataset_id, trace_id, evaluator_name, metric, evaluator_version DESC, scored_at DESC)`,
    );
    await q.query(`CREATE FUNCTION trace_score_of(dataset uuid, trace_id text, evaluator text, metric text)
      RETURNS SETOF jsonb
      LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT jsonb_build_object('score', s.score, 'passed', s.passed, 'label', s.label)
          FROM trace_scores s
         WHERE s.dataset_id = $1 AND s.trace_id = $2 AND s.evaluator_name = $3 AND s.metric = $4
         ORDER BY s.evaluator_version DESC, s.scored_at DESC, s.id
         LIMIT 1
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION trace_score_of(uuid, text, text, text)');
    await q.query('DROP INDEX trace_scores_of_idx');
  }
}
