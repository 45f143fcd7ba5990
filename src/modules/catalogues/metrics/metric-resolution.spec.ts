import { describe, expect, it } from '@jest/globals';
import type { MetricConfigDefaultEntity } from '../entities/metric-config-default.entity.js';
import type { MetricConfigEntity, MetricConfigKind } from '../entities/metric-config.entity.js';
import { metricNames, resolveMetric, type ResolutionInputs } from './metric-resolution.js';

const config = (
  name: string,
  configVersion: number,
  metric = 'exact_match',
  kind: MetricConfigKind = 'deterministic',
) => ({ id: `${name}-${configVersion}`, name, configVersion, metric, kind }) as MetricConfigEntity;
const pin = (metricName: string, configName: string | null, configVersion: number | null, revision = 1) =>
  ({ metricName, configName, configVersion, revision }) as MetricConfigDefaultEntity;
const builtins = new Map<string, MetricConfigKind>([
  ['exact_match', 'deterministic'],
  ['bleu', 'deterministic'],
  ['correctness', 'judged'],
]);

function inputs(over: Partial<ResolutionInputs> = {}): ResolutionInputs {
  return {
    configs: [config('strict', 1), config('strict', 2), config('Tone', 1, 'llm_judge', 'judged')],
    defaults: [],
    builtins,
    customMetrics: ['wordiness'],
    ...over,
  };
}

describe('metric resolution', () => {
  it('takes the eval config pin first, whatever the workspace pins', () => {
    const r = resolveMetric(
      'strict',
      inputs({
        defaults: [pin('strict', 'strict', 2)],
        evalRefs: [{ config_name: 'STRICT', config_version: 1, threshold: null, min_pass_rate: null, gating: true }],
        evalName: 'gate',
      }),
    );
    expect(r).toEqual(expect.objectContaining({ source: 'eval_config', reason: 'eval config gate pins strict v1' }));
    expect(r?.config?.configVersion).toBe(1);
  });

  it('then the workspace default, pinned or following the newest version', () => {
    expect(resolveMetric('exact_match', inputs({ defaults: [pin('exact_match', 'strict', 1, 3)] }))).toEqual(
      expect.objectContaining({
        source: 'workspace_default',
        reason: 'the workspace default for exact_match (revision 3) pins strict v1',
      }),
    );
    const follows = resolveMetric('exact_match', inputs({ defaults: [pin('exact_match', 'strict', null)] }));
    expect(follows?.config?.configVersion).toBe(2);
    expect(follows?.reason).toContain('follows the newest version of strict, now v2');
  });

  it('says when an eval config names a metric without a version', () => {
    const r = resolveMetric(
      'strict',
      inputs({
        evalRefs: [{ config_name: 'strict', config_version: null, threshold: null, min_pass_rate: null, gating: true }],
        evalName: 'gate',
      }),
    );
    expect(r).toEqual(
      expect.objectContaining({
        source: 'latest_version',
        reason:
          'eval config gate names strict without a version; no default is pinned for strict; its newest version is v2',
      }),
    );
  });

  it('then the newest version of a config of that name, case-insensitively', () => {
    expect(resolveMetric('tone', inputs())).toEqual(
      expect.objectContaining({ source: 'latest_version', kind: 'judged', metric: 'llm_judge' }),
    );
  });

  it('ignores a cleared pin and falls back to built-ins and custom ops with their defaults', () => {
    expect(resolveMetric('bleu', inputs({ defaults: [pin('bleu', null, null, 2)] }))).toEqual(
      expect.objectContaining({ source: 'builtin', config: null, kind: 'deterministic', metric: 'bleu' }),
    );
    expect(resolveMetric('correctness', inputs())).toEqual(
      expect.objectContaining({ source: 'builtin', kind: 'judged' }),
    );
    expect(resolveMetric('Wordiness', inputs())).toEqual(
      expect.objectContaining({ source: 'op_defaults', kind: 'custom', metric: 'wordiness' }),
    );
    expect(resolveMetric('meteor', inputs())).toBeNull();
  });

  it('lists every name once, sorted', () => {
    expect(
      metricNames(
        inputs({
          evalRefs: [
            { config_name: 'STRICT', config_version: null, threshold: null, min_pass_rate: null, gating: true },
          ],
        }),
      ),
    ).toEqual(['bleu', 'correctness', 'exact_match', 'strict', 'Tone', 'wordiness']);
  });
});
