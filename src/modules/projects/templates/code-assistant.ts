import type { ProjectTemplate } from './template.types.js';

export const codeAssistant: ProjectTemplate = {
  name: 'code-assistant',
  title: 'Code assistant',
  description:
    'An assistant that writes, fixes, explains and reviews code. Covers the tasks developers give it, the languages and the amount of code it must ' +
    'understand, and prompts that are vague or rest on wrong assumptions, so executable correctness and safety are measured across the range.',
  use_case: 'code_assistant',
  dimensions: [
    {
      name: 'task_type',
      description: 'What the developer asks for.',
      values: [
        { value: 'code_generation', description: 'Write new code from a description.' },
        { value: 'bug_fix', description: 'Find and fix a defect, given code and a symptom or failing test.' },
        { value: 'refactoring', description: 'Restructure code without changing behaviour.' },
        { value: 'code_explanation', description: 'Explain what code does and why.' },
        { value: 'test_writing', description: 'Write unit or integration tests for existing code.' },
        { value: 'code_review', description: 'Point out defects, risks and improvements in a change.' },
        { value: 'documentation', description: 'Write docstrings, READMEs or API docs.' },
        {
          value: 'migration',
          description: 'Upgrade to a new library or language version, or port between frameworks.',
        },
      ],
    },
    {
      name: 'programming_language',
      description: 'The main language of the task.',
      values: [
        { value: 'python', description: 'Python 3, with its common libraries (pandas, FastAPI, Django).' },
        { value: 'typescript', description: 'TypeScript and JavaScript, in Node.js or the browser.' },
        { value: 'java', description: 'Java and Kotlin on the JVM (Spring and the like).' },
        { value: 'go', description: 'Go, including goroutines, channels and modules.' },
        { value: 'rust', description: 'Rust, where ownership and lifetimes must compile.' },
        { value: 'csharp', description: 'C# on .NET.' },
        { value: 'sql', description: 'SQL queries and schema changes.' },
        { value: 'shell', description: 'Bash and other shell scripts.' },
      ],
    },
    {
      name: 'context_size',
      description: 'How much existing code the assistant must take into account.',
      values: [
        { value: 'single_function', description: 'One function or snippet.' },
        { value: 'single_file', description: 'One file with its imports.' },
        { value: 'multi_file', description: 'A few related files (module, its tests, its callers).' },
        { value: 'repository', description: 'Conventions and code across a whole repository.' },
      ],
    },
    {
      name: 'difficulty',
      description: 'Skill level the task calls for.',
      values: [
        { value: 'beginner', description: 'Basic syntax and standard library.' },
        { value: 'intermediate', description: 'Common frameworks and patterns.' },
        { value: 'advanced', description: 'Concurrency, performance, tricky edge cases.' },
        { value: 'expert', description: 'Deep knowledge of a runtime, protocol or algorithm.' },
      ],
    },
    {
      name: 'domain',
      description: 'Kind of software the code belongs to.',
      values: [
        { value: 'web_backend', description: 'APIs, services, databases.' },
        { value: 'frontend', description: 'UI components, state, styling.' },
        { value: 'data_engineering', description: 'Pipelines, transformations, analytics queries.' },
        { value: 'infrastructure', description: 'CI, containers, infrastructure as code.' },
        { value: 'algorithms', description: 'Data structures and algorithmic problems.' },
        {
          value: 'security_sensitive',
          description: 'Authentication, cryptography, input handling, where a subtle mistake is a vulnerability.',
        },
      ],
    },
    {
      name: 'prompt_clarity',
      description: 'How well the request specifies what is wanted.',
      values: [
        { value: 'precise_spec', description: 'Inputs, outputs and constraints are stated.' },
        {
          value: 'underspecified',
          description: 'Key details are missing; a good answer asks or states its assumptions.',
        },
        {
          value: 'wrong_assumption',
          description: 'The request rests on a false premise (a non-existent API); the assistant should correct it.',
        },
        {
          value: 'natural_language_only',
          description: 'Described in everyday terms by someone who does not know the codebase.',
        },
      ],
    },
  ],
  suggested_metrics: [
    {
      name: 'pass_at_1',
      kind: 'deterministic',
      description: "Share of tasks whose first answer passes the task's tests.",
      threshold: { operator: '>=', value: 0.7 },
    },
    {
      name: 'compiles',
      kind: 'deterministic',
      description: 'The code parses or compiles (and type-checks where the language has types).',
      threshold: { operator: '>=', value: 0.95 },
    },
    {
      name: 'code_correctness',
      kind: 'judged',
      description: 'A reviewer rubric on correctness where no tests exist.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'security_findings',
      kind: 'deterministic',
      description: 'Static-analysis security findings introduced by the answer.',
      threshold: { operator: '<=', value: 0 },
    },
    {
      name: 'explanation_quality',
      kind: 'judged',
      description: 'Explanations and reviews are accurate, complete and clear.',
      threshold: { operator: '>=', value: 0.8 },
    },
    {
      name: 'convention_adherence',
      kind: 'judged',
      description: 'Follows the style and conventions of the surrounding code.',
      threshold: { operator: '>=', value: 0.7 },
    },
    {
      name: 'latency_p95_ms',
      kind: 'deterministic',
      description: '95th-percentile response time in milliseconds.',
      threshold: { operator: '<=', value: 15000 },
    },
  ],
};
