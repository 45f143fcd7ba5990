import { lazyRequire } from '#libs/common/lazy-require.js';
import { SECTION_KEYS } from './report.types.js';
import { SECTION_TITLES } from './sections.js';

// Some 70 modules, for the one request that asks for the template.
const yaml = lazyRequire<typeof import('yaml')>('yaml');

/** A starting report config as commented YAML: every built-in section in the default order. */
export function reportConfigTemplate(): string {
  const body = {
    name: 'My report',
    description: 'Which sections a report has, in which order, and what each should answer',
    sections: SECTION_KEYS.map((key) => ({ key, title: SECTION_TITLES[key], questions: [] as string[] })),
  };
  return [
    '# Report config template. Edit it, then POST it as JSON to /report-configs with a workspace_id.',
    `# sections[].key: one of ${SECTION_KEYS.join(', ')}; each at most once, in report order.`,
    '# sections[].title: the heading in reports (optional).',
    '# sections[].questions: up to 20 extra questions the section should answer (optional).',
    yaml().stringify(body),
  ].join('\n');
}
