import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { DimensionDefinition } from '../dto/template.dto.js';
import { TemplatesService } from '../templates.service.js';
import { PROJECT_TEMPLATES } from './index.js';

describe('built-in project templates', () => {
  it('include the five core use cases, with unique kebab-case names', () => {
    const names = PROJECT_TEMPLATES.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'customer-support-assistant',
        'rag-question-answering',
        'summarisation',
        'code-assistant',
        'agentic-workflow',
      ]),
    );
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9-]*$/);
  });

  it.each(PROJECT_TEMPLATES.map((t) => [t.name, t] as const))(
    '%s has unique dimensions of 3-10 described, unique values',
    (_, template) => {
      expect(template.dimensions.length).toBeGreaterThanOrEqual(4);
      const dimensionNames = template.dimensions.map((d) => d.name);
      expect(new Set(dimensionNames).size).toBe(dimensionNames.length);
      for (const dimension of template.dimensions) {
        expect(dimension.description.length).toBeGreaterThan(10);
        expect(dimension.values.length).toBeGreaterThanOrEqual(3);
        expect(dimension.values.length).toBeLessThanOrEqual(10);
        const values = dimension.values.map((v) => v.value);
        expect(new Set(values).size).toBe(values.length);
        for (const value of dimension.values) expect(value.description.length).toBeGreaterThan(3);
      }
      const metricNames = template.suggested_metrics.map((m) => m.name);
      expect(new Set(metricNames).size).toBe(metricNames.length);
      expect(metricNames.length).toBeGreaterThanOrEqual(3);
    },
  );

  it.each(PROJECT_TEMPLATES.map((t) => [t.name, t] as const))(
    '%s dimensions pass the validation project creation applies (DimensionDefinition)',
    (_, template) => {
      for (const plain of template.dimensions) {
        const errors = validateSync(plainToInstance(DimensionDefinition, structuredClone(plain)), {
          whitelist: true,
          forbidNonWhitelisted: true,
        });
        expect(errors).toEqual([]);
      }
    },
  );

  it('DimensionDefinition refuses what project creation must not accept', () => {
    const bad = plainToInstance(DimensionDefinition, {
      name: 'Topic Name',
      description: 'x',
      values: [{ value: 'Has Spaces', description: 'x' }],
      extra: true,
    });
    const errors = validateSync(bad, { whitelist: true, forbidNonWhitelisted: true });
    expect(errors.map((e) => e.property).sort()).toEqual(['extra', 'name', 'values']);
    const empty = validateSync(plainToInstance(DimensionDefinition, { name: 'topic', description: 'x', values: [] }));
    expect(empty.map((e) => e.property)).toEqual(['values']);
  });

  it('the service hands out copies, so editing a detail does not change the catalogue', () => {
    const service = new TemplatesService();
    const detail = service.get('summarisation');
    detail.dimensions[0].values.push({ value: 'added', description: 'edited by a caller' });
    detail.dimensions[0].name = 'renamed';
    const fresh = service.get('summarisation');
    expect(fresh.dimensions[0].name).toBe('document_type');
    expect(fresh.dimensions[0].values.map((v) => v.value)).not.toContain('added');
  });
});
