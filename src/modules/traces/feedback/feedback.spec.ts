import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CreateTraceFeedbackRequest } from '../dto/feedback.dto.js';
import { feedbackContent, toFeedbackSummaries } from '../traces.mapper.js';
import { feedbackEquality } from './feedback.repository.js';

const refused = (body: Record<string, unknown>) =>
  validateSync(plainToInstance(CreateTraceFeedbackRequest, body)).map((e) => e.property);
const base = { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', name: 'thumbs', value: true };

describe('a feedback request', () => {
  it('takes OTLP ids in either case and a source’s own ids, and refuses what the traces family would drop', () => {
    expect(refused({ ...base, trace_id: base.trace_id.toUpperCase(), span_id: '00F067AA0BA902B7' })).toEqual([]);
    expect(refused({ ...base, trace_id: 'langfuse-7f3c', span_id: 'obs-1' })).toEqual([]);
    expect(refused({ ...base, trace_id: '4bf92f3577b34da6a3ce929d0e0e47' })).toEqual(['trace_id']);
    expect(refused({ ...base, trace_id: '0'.repeat(32) })).toEqual(['trace_id']);
    expect(refused({ ...base, span_id: base.trace_id })).toEqual(['span_id']);
    expect(refused({ ...base, trace_id: 'has space' })).toEqual(['trace_id']);
  });

  it('takes a boolean, a finite number or a short string as the value', () => {
    for (const value of [false, 0, -2.5, 'partly']) expect(refused({ ...base, value })).toEqual([]);
    for (const value of [null, NaN, Infinity, '', 'x'.repeat(201), { up: true }, [1]])
      expect(refused({ ...base, value })).toEqual(['value']);
  });

  it('bounds metadata by members and bytes', () => {
    expect(refused({ ...base, metadata: { channel: 'web' } })).toEqual([]);
    expect(refused({ ...base, metadata: { blob: 'x'.repeat(8200) } })).toEqual(['metadata']);
    expect(refused({ ...base, metadata: Object.fromEntries([...Array(51).keys()].map((i) => [`k${i}`, i])) })).toEqual([
      'metadata',
    ]);
  });
});

describe('feedback values', () => {
  it('reads a query value as each kind may equal it', () => {
    expect(feedbackEquality('false')).toEqual({ text: 'false', boolean: false, number: undefined });
    expect(feedbackEquality('4.5')).toEqual({ text: '4.5', boolean: undefined, number: 4.5 });
    expect(feedbackEquality('partly')).toEqual({ text: 'partly', boolean: undefined, number: undefined });
    expect(feedbackEquality(' ')).toEqual({ text: ' ', boolean: undefined, number: undefined });
  });

  it('compares a retry’s content with the stored record, metadata by value', () => {
    const stored = {
      trace_id: 't',
      span_id: null,
      name: 'score',
      value_number: 3,
      value_boolean: null,
      value_string: null,
      comment: null,
      user_ref: 'u',
      metadata: { a: 1, b: [1, 2] },
    };
    const retry = { ...stored, metadata: JSON.stringify({ b: [1, 2], a: 1 }) };
    expect(feedbackContent(retry)).toEqual(feedbackContent(stored));
    expect(feedbackContent({ ...retry, value_number: 4 })).not.toEqual(feedbackContent(stored));
    expect(feedbackContent(stored).value).toBe(3);
  });

  it('sums feedback up per trace and name, counts and means as numbers', () => {
    const summaries = toFeedbackSummaries([
      { trace_id: 'a', name: 'thumbs', count: '3', mean: null, thumbs_up: '1', thumbs_down: '2' },
      { trace_id: 'a', name: 'score', count: '2', mean: '4.5', thumbs_up: '0', thumbs_down: '0' },
    ]);
    expect(summaries.get('a')).toEqual({
      thumbs: { count: 3, mean: null, thumbs_up: 1, thumbs_down: 2 },
      score: { count: 2, mean: 4.5, thumbs_up: 0, thumbs_down: 0 },
    });
    expect(summaries.get('b')).toBeUndefined();
  });
});
