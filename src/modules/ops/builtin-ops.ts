import { DETERMINISTIC_METRICS } from '#libs/evaluation/deterministic-metrics.js';
import { GENERIC_JUDGED_METRIC, JUDGED_METRIC_DEFAULTS } from '#libs/evaluation/judged-metrics.js';
import { QUALITY_CHECKS, type ParamSpec } from '../datasets/checks/quality-checks.js';
import type { OpKind } from './entities/registry-op.entity.js';

export interface BuiltinOp {
  name: string;
  kind: OpKind;
  description: string;
  params_schema: Record<string, unknown>;
}

const JUDGED_SCHEMA = {
  type: 'object',
  description: "Judged metrics are set through a metric config's `judged` member",
  properties: {
    rubric: { type: 'string', minLength: 1, maxLength: 20000 },
    scale: {
      oneOf: [
        {
          type: 'object',
          properties: { type: { const: 'numeric' }, min: { type: 'number' }, max: { type: 'number' } },
          required: ['type', 'min', 'max'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: {
            type: { const: 'labels' },
            labels: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 20 },
            scores: { type: 'object', additionalProperties: { type: 'number' } },
          },
          required: ['type', 'labels'],
          additionalProperties: false,
        },
      ],
    },
    pass_threshold: { type: 'number', minimum: 0, maximum: 1 },
    pass_labels: { type: 'array', items: { type: 'string' } },
    judge_id: { type: ['string', 'null'], format: 'uuid' },
  },
  additionalProperties: false,
};

function checkSchema(params: Record<string, ParamSpec>): Record<string, unknown> {
  const types: Record<ParamSpec['type'], Record<string, unknown>> = {
    number: { type: 'number', minimum: 0 },
    string: { type: 'string' },
    boolean: { type: 'boolean' },
    'string[]': { type: 'array', items: { type: 'string' } },
  };
  return {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(params).map(([name, spec]) => [
        name,
        { ...types[spec.type], default: spec.default, description: spec.description },
      ]),
    ),
    additionalProperties: false,
  };
}

/** The operations the service implements itself: metrics (deterministic and judged) and dataset quality checks. */
export const BUILTIN_OPS: readonly BuiltinOp[] = [
  ...DETERMINISTIC_METRICS.map((m) => ({
    name: m.name,
    kind: 'metric' as const,
    description: m.description,
    params_schema: m.paramsSchema,
  })),
  {
    name: GENERIC_JUDGED_METRIC,
    kind: 'metric',
    description: 'An LLM judge grades each output with your rubric on a numeric or label scale',
    params_schema: JUDGED_SCHEMA,
  },
  ...JUDGED_METRIC_DEFAULTS.map((m) => ({
    name: m.name,
    kind: 'metric' as const,
    description: `An LLM judge grades ${m.name.replace(/_/g, ' ')} (built-in rubric, 1-5)`,
    params_schema: JUDGED_SCHEMA,
  })),
  ...QUALITY_CHECKS.map((c) => ({
    name: c.id,
    kind: 'check' as const,
    description: c.description,
    params_schema: checkSchema(c.params),
  })),
];
