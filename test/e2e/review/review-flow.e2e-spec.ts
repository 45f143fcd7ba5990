import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';
import { EXPECTED, planted } from '../../statistics/review-queue-planted.js';

type Actor = Awaited<ReturnType<TestApp['factory']['actor']>>;

const RUBRIC = {
  fields: [
    { name: 'correct', type: 'pass_fail', required: true },
    { name: 'score', type: 'numeric', required: false, min: 1, max: 5 },
    { name: 'tone', type: 'categorical', required: false, options: ['curt', 'neutral', 'warm'] },
    { name: 'note', type: 'free_text' },
  ],
};

describe('review queues: the whole flow', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let reviewers: Actor[];
  let versionId: string;
  let queueId: string;

  const rows = Array.from({ length: 60 }, (_, n) => ({ n, question: `question ${n}`, answer: `answer ${n}` }));

  async function member(): Promise<Actor> {
    const actor = await t.factory.actor();
    await t.factory.addMember(r.workspace.id, actor.id, 'member');
    return actor;
  }

  const next = (queue: string, who: Actor) => t.http.post(`/review-queues/${queue}/items:next`).set(who.auth).send();

  /** A queue (over the uploaded rows unless `settings` name a source) holding what the filter selects, and the items' answer. */
  async function queueAdding(
    settings: Record<string, unknown>,
    filter: Record<string, unknown>,
  ): Promise<{ queue: string; added: unknown }> {
    const queue = (
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({
          workspace_id: r.workspace.id,
          rubric: RUBRIC,
          source: { kind: 'dataset_version', id: versionId },
          ...settings,
        })
        .expect(201)
    ).body.id;
    const added = await t.http.post(`/review-queues/${queue}/items`).set(r.member.auth).send({ filter }).expect(200);
    return { queue, added: added.body };
  }

  /** A queue over the uploaded rows holding those the filter selects. */
  const queueOf = async (settings: Record<string, unknown>, filter: Record<string, unknown>) =>
    (await queueAdding(settings, filter)).queue;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    reviewers = [await member(), await member(), await member(), await member()];
    const upload = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .attach('file', Buffer.from(rows.map((row) => JSON.stringify(row)).join('\n')), 'rows.jsonl')
      .expect(201);
    versionId = upload.body.latest_version.id;
  });
  afterAll(async () => t?.close());

  it('creates a queue (members), refuses a bad rubric, an unknown source and a non-member reviewer', async () => {
    const base = {
      workspace_id: r.workspace.id,
      name: 'Answers',
      rubric: RUBRIC,
      source: { kind: 'dataset_version', id: versionId },
      overlap: 2,
      reviewers: [reviewers[0].id, reviewers[1].id],
    };
    expectProblem(await t.http.post('/review-queues').set(r.viewer.auth).send(base), 403);
    const bad = await t.http
      .post('/review-queues')
      .set(r.member.auth)
      .send({ ...base, rubric: { fields: [{ name: 'x', type: 'categorical', options: ['a', 'a'] }] } });
    expectProblem(bad, 400, 'review_rubric_invalid');
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'rubric.fields[0].options',
      'rubric.fields',
    ]);
    expectProblem(
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({ ...base, source: { kind: 'traces', id: versionId } }),
      400,
      'unknown_review_source',
    );
    expectProblem(
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({ ...base, reviewers: [r.outsider.id] }),
      400,
      'reviewer_not_member',
    );
    expectProblem(
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({ ...base, overlap: 11 }),
      400,
      'validation_failed',
    );
    const created = await t.http.post('/review-queues').set(r.member.auth).send(base).expect(201);
    queueId = created.body.id;
    expect(created.body).toEqual(
      expect.objectContaining({
        state: 'open',
        overlap: 2,
        lease_minutes: 15,
        source: { kind: 'dataset_version', id: versionId },
        items: { total: 0, pending: 0, final: 0, disagreement: 0 },
      }),
    );
    expect(created.body.rubric.version).toBe(1);
    const listed = await t.http
      .get('/review-queues')
      .query({ workspace_id: r.workspace.id, state: 'open' })
      .set(r.viewer.auth)
      .expect(200);
    expect(listed.body.items.map((q: { id: string }) => q.id)).toEqual([queueId]);
  });

  it('adds items by a filter with a seeded sample (reproducible), by ids, and counts repeats as skipped', async () => {
    const scratch = (
      await t.http
        .post('/review-queues')
        .set(r.member.auth)
        .send({
          workspace_id: r.workspace.id,
          name: 'Sampled',
          rubric: RUBRIC,
          source: { kind: 'dataset_version', id: versionId },
        })
        .expect(201)
    ).body.id;
    const sampled = await t.http
      .post(`/review-queues/${scratch}/items`)
      .set(r.member.auth)
      .send({ filter: { field: 'n', op: 'gte', value: 10 }, sample: { size: 5, seed: 7 } })
      .expect(200);
    expect(sampled.body).toEqual({ added: 5, skipped: 0, not_found: [], total: 5 });
    const again = await t.http
      .post(`/review-queues/${scratch}/items`)
      .set(r.member.auth)
      .send({ filter: { field: 'n', op: 'gte', value: 10 }, sample: { size: 5, seed: 7 } })
      .expect(200);
    expect(again.body).toEqual({ added: 0, skipped: 5, not_found: [], total: 5 });
    const items = (await t.http.get(`/review-queues/${scratch}/items`).set(r.viewer.auth).expect(200)).body.items;
    // The same seed over the same rows draws the same rows on both databases.
    expect(items.map((i: { context: { row: { n: number } } }) => i.context.row.n)).toEqual([10, 21, 33, 36, 40]);
    expect(items[0].context).toEqual(
      expect.objectContaining({ row: expect.objectContaining({ question: 'question 10', answer: 'answer 10' }) }),
    );
    const byId = await t.http
      .post(`/review-queues/${scratch}/items`)
      .set(r.member.auth)
      .send({ ids: [items[0].ref, '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a99'] })
      .expect(200);
    expect(byId.body).toEqual({ added: 0, skipped: 1, not_found: ['0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a99'], total: 5 });
    expectProblem(
      await t.http
        .post(`/review-queues/${scratch}/items`)
        .set(r.member.auth)
        .send({ filter: { field: 'nope', op: 'eq', value: 1 } }),
      400,
      'item_selection_invalid',
    );
    expectProblem(
      await t.http.post(`/review-queues/${scratch}/items`).set(r.member.auth).send({ run_failures: {} }),
      400,
      'item_selection_invalid',
    );
    expectProblem(
      await t.http.post(`/review-queues/${scratch}/items`).set(r.member.auth).send({}),
      400,
      'item_selection_invalid',
    );
  });

  it('two reviewers label 60 items blind; agreement equals the independent computation', async () => {
    const added = await t.http
      .post(`/review-queues/${queueId}/items`)
      .set(r.member.auth)
      .send({ filter: { field: 'n', op: 'gte', value: 0 } })
      .expect(200);
    expect(added.body).toEqual({ added: 60, skipped: 0, not_found: [], total: 60 });
    expectProblem(await next(queueId, reviewers[2]), 403, 'not_a_reviewer');
    const labels = planted();
    for (const [who, side] of [
      [reviewers[0], 'a'],
      [reviewers[1], 'b'],
    ] as const) {
      for (let k = 0; ; k++) {
        const res = await next(queueId, who);
        if (res.status === 204) break;
        expect(res.status).toBe(200);
        expect(k).toBeLessThan(60);
        // Blind: the item carries its context and the rubric, never another reviewer's label.
        expect(Object.keys(res.body).sort()).toEqual(['item', 'lease_expires_at', 'rubric']);
        expect(res.body.item.final_label).toBeNull();
        expect(JSON.stringify(res.body)).not.toContain(reviewers[0].id);
        const n = res.body.item.context.row.n as number;
        await t.http
          .post(`/review-queues/${queueId}/items/${res.body.item.id}/labels`)
          .set(who.auth)
          .send({ values: labels[n][side] })
          .expect(201);
      }
    }
    const queue = (await t.http.get(`/review-queues/${queueId}`).set(r.viewer.auth).expect(200)).body;
    expect(queue.items).toEqual({
      total: 60,
      pending: 0,
      final: 60 - EXPECTED.disagreements,
      disagreement: EXPECTED.disagreements,
    });

    const agreement = await t.http
      .get(`/review-queues/${queueId}/agreement`)
      .query({ seed: 42 })
      .set(r.viewer.auth)
      .expect(200);
    expect(agreement.body).toEqual(
      expect.objectContaining({ items: 60, disagreements: EXPECTED.disagreements, seed: 42, confidence: 0.95 }),
    );
    const field = (name: string) => agreement.body.fields.find((f: { field: string }) => f.field === name);
    expect(agreement.body.fields.map((f: { field: string }) => f.field)).toEqual(['correct', 'score', 'tone']);
    expect(field('correct').cohens_kappa.value).toBeCloseTo(EXPECTED.correct.cohens_kappa, 12);
    expect(field('correct').krippendorff_alpha.nominal.value).toBeCloseTo(EXPECTED.correct.alpha_nominal, 12);
    expect(field('score').cohens_kappa.value).toBeCloseTo(EXPECTED.score.cohens_kappa, 12);
    expect(field('score').krippendorff_alpha.interval.value).toBeCloseTo(EXPECTED.score.alpha_interval, 12);
    expect(field('score').krippendorff_alpha.ordinal.value).toBeCloseTo(EXPECTED.score.alpha_ordinal, 12);
    expect(field('correct').disagreements).toBe(EXPECTED.disagreements);
    const interval = field('correct').cohens_kappa.interval;
    expect(interval.low).toBeLessThan(EXPECTED.correct.cohens_kappa);
    expect(interval.high).toBeGreaterThan(EXPECTED.correct.cohens_kappa);
    expect(field('correct').per_reviewer).toHaveLength(2);
    expect(field('correct').per_reviewer[0]).toEqual(expect.objectContaining({ labelled: 60 }));
    // Seeded: the same seed gives the same intervals.
    const again = await t.http
      .get(`/review-queues/${queueId}/agreement`)
      .query({ seed: 42 })
      .set(r.viewer.auth)
      .expect(200);
    expect(again.body).toEqual(agreement.body);
  });

  it('edits keep history; adjudicators see every label and settle disagreements', async () => {
    expectProblem(
      await t.http.get(`/review-queues/${queueId}/disagreements`).set(r.member.auth),
      403,
      'not_an_adjudicator',
    );
    const page = await t.http.get(`/review-queues/${queueId}/disagreements`).set(r.admin.auth).expect(200);
    expect(page.body.total).toBe(EXPECTED.disagreements);
    const [first] = page.body.items;
    expect(first.labels.map((l: { reviewer_id: string }) => l.reviewer_id).sort()).toEqual(
      [reviewers[0].id, reviewers[1].id].sort(),
    );
    expectProblem(
      await t.http
        .post(`/review-queues/${queueId}/items/${first.item.id}/adjudication`)
        .set(r.admin.auth)
        .send({ values: { correct: 'yes' } }),
      422,
      'label_invalid',
    );
    const settled = await t.http
      .post(`/review-queues/${queueId}/items/${first.item.id}/adjudication`)
      .set(r.admin.auth)
      .send({ values: { correct: true } })
      .expect(200);
    expect(settled.body).toEqual(
      expect.objectContaining({ state: 'final', final_label: { correct: true }, final_source: 'adjudication' }),
    );
    expectProblem(
      await t.http
        .post(`/review-queues/${queueId}/items/${first.item.id}/adjudication`)
        .set(r.admin.auth)
        .send({ values: { correct: true } }),
      409,
      'not_in_disagreement',
    );
    // An edit of one's own label keeps the earlier value, by whom and when; it can settle a disagreement.
    const second = page.body.items[1];
    const theirs = second.labels.find((l: { reviewer_id: string }) => l.reviewer_id === reviewers[0].id);
    const other = second.labels.find((l: { reviewer_id: string }) => l.reviewer_id === reviewers[1].id);
    const edited = await t.http
      .patch(`/review-queues/${queueId}/items/${second.item.id}/labels/mine`)
      .set(reviewers[0].auth)
      .send({ values: other.values })
      .expect(200);
    expect(edited.body.values).toEqual(other.values);
    expect(edited.body.history).toEqual([expect.objectContaining({ values: theirs.values, by: reviewers[0].id })]);
    const item = (
      await t.http.get(`/review-queues/${queueId}/items`).query({ page_size: 200 }).set(r.viewer.auth)
    ).body.items.find((i: { id: string }) => i.id === second.item.id);
    expect(item).toEqual(expect.objectContaining({ state: 'final', final_source: 'consensus' }));
    expectProblem(
      await t.http
        .patch(`/review-queues/${queueId}/items/${second.item.id}/labels/mine`)
        .set(reviewers[2].auth)
        .send({ values: { correct: true } }),
      404,
      'no_label',
    );
    const finals = await t.http
      .get(`/review-queues/${queueId}/labels`)
      .query({ page_size: 200 })
      .set(r.viewer.auth)
      .expect(200);
    expect(finals.body.total).toBe(60 - EXPECTED.disagreements + 2);
    const audit = await t.dataSource.query(
      `SELECT action FROM audit_events WHERE target_id = $1 AND action = 'review_item.adjudicated'`,
      [queueId],
    );
    expect(audit).toHaveLength(1);
  });

  it('exports the final dataset-row labels to a new candidate version; a second export writes nothing', async () => {
    expectProblem(
      await t.http
        .post(`/review-queues/${queueId}/exports`)
        .set(r.member.auth)
        .send({ dataset_name: 'confirmed answers' }),
      409,
      'export_target_invalid',
    );
    const exported = await t.http
      .post(`/review-queues/${queueId}/exports`)
      .set(r.member.auth)
      .send({ dataset_name: 'confirmed answers', create_dataset: true })
      .expect(201);
    expect(exported.body).toEqual(
      expect.objectContaining({ rows: 60 - EXPECTED.disagreements + 2, already_exported: 0, version_number: 1 }),
    );
    const version = (await t.http.get(`/dataset-versions/${exported.body.version_id}`).set(r.viewer.auth).expect(200))
      .body;
    expect(version).toEqual(
      expect.objectContaining({ state: 'candidate', row_count: 60 - EXPECTED.disagreements + 2 }),
    );
    const rowsOut = await t.http
      .post(`/datasets/${exported.body.dataset_id}/query`)
      .set(r.viewer.auth)
      .send({ limit: 1 })
      .expect(200);
    expect(Object.keys(rowsOut.body.items[0])).toEqual(
      expect.arrayContaining(['label_correct', 'review_ref', 'review_queue_id']),
    );
    const again = await t.http
      .post(`/review-queues/${queueId}/exports`)
      .set(r.member.auth)
      .send({ dataset_name: 'confirmed answers' })
      .expect(201);
    expect(again.body).toEqual(
      expect.objectContaining({ rows: 0, already_exported: 60 - EXPECTED.disagreements + 2, version_id: null }),
    );
    // Without a dataset name, the labels become columns of the source dataset's rows, in its next version.
    const inPlace = await t.http.post(`/review-queues/${queueId}/exports`).set(r.member.auth).send({}).expect(201);
    expect(inPlace.body).toEqual(
      expect.objectContaining({ rows: 60 - EXPECTED.disagreements + 2, version_number: 2, missing_rows: [] }),
    );
    const next = (await t.http.get(`/dataset-versions/${inPlace.body.version_id}`).set(r.viewer.auth).expect(200)).body;
    expect(next).toEqual(expect.objectContaining({ state: 'candidate', row_count: 60 }));
    const labelled = await t.http
      .post(`/datasets/${inPlace.body.dataset_id}/versions/${inPlace.body.version_id}/query`)
      .set(r.viewer.auth)
      .send({ filter: { field: 'label_correct', op: 'is_null', value: false }, limit: 1000 })
      .expect(200);
    expect(labelled.body.items).toHaveLength(60 - EXPECTED.disagreements + 2);
    const labels = planted();
    for (const row of labelled.body.items as Array<{ n: number; label_correct: boolean }>)
      if (labels[row.n].a.correct === labels[row.n].b.correct) expect(row.label_correct).toBe(labels[row.n].a.correct);
  });

  it('validates labels against the rubric: 422 with every field named', async () => {
    const queue = await queueOf({ name: 'Validation' }, { field: 'n', op: 'lt', value: 2 });
    const leased = (await next(queue, reviewers[3]).expect(200)).body;
    const submit = (values: unknown) =>
      t.http.post(`/review-queues/${queue}/items/${leased.item.id}/labels`).set(reviewers[3].auth).send({ values });
    const bad = await submit({ score: 9, tone: 'loud', extra: 1, note: 3 });
    expectProblem(bad, 422, 'label_invalid');
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      ['values.correct', 'values.extra', 'values.note', 'values.score', 'values.tone'].sort(),
    );
    expectProblem(await submit({ correct: true, score: 2.5 }), 422, 'label_invalid');
    expectProblem(
      await t.http.post(`/review-queues/${queue}/items/${leased.item.id}/labels`).set(reviewers[3].auth).send({}),
      400,
      'validation_failed',
    );
    await submit({ correct: false, score: 1, tone: 'curt', note: 'wrong refund window' }).expect(201);
    expectProblem(await submit({ correct: true }), 409, 'already_labelled');
    // The other item: without a lease no label; skipping frees it for someone else.
    const [, otherItem] = (await t.http.get(`/review-queues/${queue}/items`).set(r.viewer.auth)).body.items;
    expectProblem(
      await t.http
        .post(`/review-queues/${queue}/items/${otherItem.id}/labels`)
        .set(reviewers[2].auth)
        .send({ values: { correct: true } }),
      409,
      'no_lease',
    );
    const mine = (await next(queue, reviewers[2]).expect(200)).body;
    const skipped = await t.http
      .post(`/review-queues/${queue}/items/${mine.item.id}:skip`)
      .set(reviewers[2].auth)
      .send({ reason: 'not my language' })
      .expect(201);
    expect(skipped.body).toEqual(expect.objectContaining({ kind: 'skip', reason: 'not my language', values: null }));
    await next(queue, reviewers[2]).expect(204);
    await next(queue, reviewers[1]).expect(200);
    // A new rubric is the next version; a label keeps the version it was given under.
    const patched = await t.http
      .patch(`/review-queues/${queue}`)
      .set(r.member.auth)
      .send({ rubric: { fields: [{ name: 'correct', type: 'pass_fail', required: true }] } })
      .expect(200);
    expect(patched.body.rubric.version).toBe(2);
    const versions = await t.http.get(`/review-queues/${queue}/rubric-versions`).set(r.viewer.auth).expect(200);
    expect(versions.body.items.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    // Closed queues lease nothing.
    await t.http.patch(`/review-queues/${queue}`).set(r.member.auth).send({ state: 'closed' }).expect(200);
    expectProblem(await next(queue, reviewers[0]), 409, 'queue_closed');
    expectProblem(await t.http.delete(`/review-queues/${queue}`).set(r.member.auth), 403);
    await t.http.delete(`/review-queues/${queue}`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.get(`/review-queues/${queue}`).set(r.viewer.auth), 404);
  });

  it('parallel items:next from 4 reviewers never double-books a slot', async () => {
    const queue = await queueOf({ name: 'Parallel', overlap: 2 }, { field: 'n', op: 'lt', value: 12 });
    const held: Array<{ reviewer: string; item: string }> = [];
    const work = async (who: Actor) => {
      for (;;) {
        const res = await next(queue, who);
        if (res.status === 204) return;
        expect(res.status).toBe(200);
        held.push({ reviewer: who.id, item: res.body.item.id });
        await t.http
          .post(`/review-queues/${queue}/items/${res.body.item.id}/labels`)
          .set(who.auth)
          .send({ values: { correct: true } })
          .expect(201);
      }
    };
    // Every round, the four ask at once.
    await Promise.all(reviewers.map(work));
    expect(held).toHaveLength(24);
    const perItem = new Map<string, string[]>();
    for (const h of held) perItem.set(h.item, [...(perItem.get(h.item) ?? []), h.reviewer]);
    expect(perItem.size).toBe(12);
    for (const who of perItem.values()) {
      expect(who).toHaveLength(2);
      expect(new Set(who).size).toBe(2);
    }
    const [{ n }] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM review_slots s JOIN review_items i ON i.id = s.item_id WHERE i.queue_id = $1`,
      [queue],
    );
    expect(n).toBe(24);
  });

  it('an expired lease frees its slot; the late holder can no longer label', async () => {
    const queue = await queueOf({ name: 'Leases', lease_minutes: 1 }, { field: 'n', op: 'eq', value: 3 });
    const first = (await next(queue, reviewers[0]).expect(200)).body;
    // Asking again answers the lease already held.
    expect((await next(queue, reviewers[0]).expect(200)).body.item.id).toBe(first.item.id);
    await next(queue, reviewers[1]).expect(204);
    await t.dataSource.query(`UPDATE review_slots SET expires_at = now() - interval '1 second' WHERE item_id = $1`, [
      first.item.id,
    ]);
    const second = (await next(queue, reviewers[1]).expect(200)).body;
    expect(second.item.id).toBe(first.item.id);
    expectProblem(
      await t.http
        .post(`/review-queues/${queue}/items/${first.item.id}/labels`)
        .set(reviewers[0].auth)
        .send({ values: { correct: true } }),
      409,
      'no_lease',
    );
    // A released lease frees the slot at once.
    await t.http.delete(`/review-queues/${queue}/items/${first.item.id}/lease`).set(reviewers[1].auth).expect(204);
    expectProblem(
      await t.http.delete(`/review-queues/${queue}/items/${first.item.id}/lease`).set(reviewers[1].auth),
      409,
      'no_lease',
    );
    expect((await next(queue, reviewers[0]).expect(200)).body.item.id).toBe(first.item.id);
  });

  it('a lower overlap settles the items that already have as many labels', async () => {
    const queue = await queueOf({ name: 'Overlap', overlap: 2 }, { field: 'n', op: 'eq', value: 4 });
    const leased = (await next(queue, reviewers[0]).expect(200)).body;
    await t.http
      .post(`/review-queues/${queue}/items/${leased.item.id}/labels`)
      .set(reviewers[0].auth)
      .send({ values: { correct: true, tone: 'warm' } })
      .expect(201);
    const patched = await t.http.patch(`/review-queues/${queue}`).set(r.member.auth).send({ overlap: 1 }).expect(200);
    expect(patched.body.items).toEqual({ total: 1, pending: 0, final: 1, disagreement: 0 });
    const [final] = (await t.http.get(`/review-queues/${queue}/labels`).set(r.viewer.auth).expect(200)).body.items;
    expect(final).toEqual(expect.objectContaining({ values: { correct: true, tone: 'warm' }, source: 'consensus' }));
  });

  it('another workspace can neither read nor change a queue', async () => {
    const other = await t.factory.workspaceWithRoles();
    expectProblem(await t.http.get(`/review-queues/${queueId}`).set(other.owner.auth), 403);
    expectProblem(await t.http.patch(`/review-queues/${queueId}`).set(other.owner.auth).send({ name: 'mine' }), 403);
    expectProblem(await t.http.get(`/review-queues/${queueId}/labels`).set(other.owner.auth), 403);
    expectProblem(await next(queueId, other.owner), 403);
    const listed = await t.http
      .get('/review-queues')
      .query({ workspace_id: other.workspace.id })
      .set(other.owner.auth)
      .expect(200);
    expect(listed.body.total).toBe(0);
    expect((await t.http.get(`/review-queues/${queueId}`).set(r.viewer.auth).expect(200)).body.name).toBe('Answers');
  });

  it('reviews traces: confirmed labels become test cases in a candidate version', async () => {
    const span = (trace: number, id: number, parent: number | null, input: string, output: string) => ({
      trace_id: `trace-${trace}`,
      span_id: `span-${trace}-${id}`,
      parent_span_id: parent === null ? null : `span-${trace}-${parent}`,
      name: parent === null ? 'agent' : 'llm',
      start_time: `2025-06-01T10:00:0${id}Z`,
      end_time: `2025-06-01T10:00:0${id + 1}Z`,
      attributes: {
        'session.id': trace === 3 ? 'session-b' : 'session-a',
        'openinference.span.kind': parent === null ? 'CHAIN' : 'LLM',
        'input.value': input,
        'output.value': output,
      },
    });
    const records = [1, 2, 3].flatMap((n) => [
      span(n, 0, null, `refund question ${n}`, `refund answer ${n}`),
      span(n, 1, 0, `prompt ${n}`, `completion ${n}`),
    ]);
    const started = await t.http
      .post('/traces/land:inline')
      .set(r.member.auth)
      .send({ workspace_id: r.workspace.id, dataset_name: 'production', records })
      .expect(202);
    const landed = await landingSettled(t, r.viewer.auth, started.body.id);
    expect(landed.state).toBe('succeeded');
    const agents = { field: 'name', op: 'eq', value: 'agent' };
    const failed = { fields: [{ name: 'failed', type: 'pass_fail', required: true }] };
    const { queue, added } = await queueAdding(
      { name: 'Production failures', rubric: failed, source: { kind: 'traces', id: landed.version_id } },
      agents,
    );
    expect(added).toEqual({ added: 3, skipped: 0, not_found: [], total: 3 });
    for (;;) {
      const res = await next(queue, reviewers[0]);
      if (res.status === 204) break;
      expect(res.body.item.context).toEqual(
        expect.objectContaining({ span_count: 2, spans: expect.any(Array), trace_id: res.body.item.ref }),
      );
      await t.http
        .post(`/review-queues/${queue}/items/${res.body.item.id}/labels`)
        .set(reviewers[0].auth)
        .send({ values: { failed: res.body.item.ref !== 'trace-2' } })
        .expect(201);
    }
    // Sessions group traces: an item is a session, its snapshot every span of its traces.
    const { queue: sessions, added: bySession } = await queueAdding(
      { name: 'Sessions', rubric: failed, source: { kind: 'sessions', id: landed.version_id } },
      agents,
    );
    expect(bySession).toEqual({ added: 2, skipped: 0, not_found: [], total: 2 });
    const sessionItems = (await t.http.get(`/review-queues/${sessions}/items`).set(r.viewer.auth)).body.items;
    expect(
      sessionItems.map((i: { ref: string; context: { span_count: number } }) => [i.ref, i.context.span_count]),
    ).toEqual([
      ['session-a', 4],
      ['session-b', 2],
    ]);
    const exported = await t.http
      .post(`/review-queues/${queue}/exports`)
      .set(r.member.auth)
      .send({ dataset_name: 'regressions', create_dataset: true })
      .expect(201);
    expect(exported.body).toEqual(expect.objectContaining({ rows: 3, version_number: 1 }));
    const version = (await t.http.get(`/dataset-versions/${exported.body.version_id}`).set(r.viewer.auth).expect(200))
      .body;
    expect(version).toEqual(expect.objectContaining({ state: 'candidate', row_count: 3 }));
    expectProblem(
      await t.http.post(`/review-queues/${queue}/exports`).set(r.member.auth).send({}),
      409,
      'export_target_invalid',
    );
    const out = await t.http
      .post(`/datasets/${exported.body.dataset_id}/query`)
      .set(r.viewer.auth)
      .send({ sort: [{ field: 'review_ref', direction: 'asc' }] })
      .expect(200);
    expect(
      out.body.items.map((row: Record<string, unknown>) => [row.review_ref, row.input, row.output, row.label_failed]),
    ).toEqual([
      ['trace-1', 'refund question 1', 'refund answer 1', true],
      ['trace-2', 'refund question 2', 'refund answer 2', false],
      ['trace-3', 'refund question 3', 'refund answer 3', true],
    ]);
  });
});
