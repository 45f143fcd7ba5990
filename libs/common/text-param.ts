import { Param, type PipeTransform } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { ValidationFailedError } from './domain-error.js';

/** How long the text path parameters may be (docs/api-conventions.md, Limits). */
export const PATH_TEXT = {
  /** A record's name or key: a custom op, a template, a metric config, a report section. */
  name: 100,
  /** A metric's name, which a config's name qualifies (`faithfulness:strict`). */
  metric: 200,
  /** A version: a number, `latest`, or a package's semantic version. */
  version: 32,
  /** A file's name in a signed download URL. */
  fileName: 255,
  /** A session id as the dataset's conversation column holds it. */
  sessionId: 1000,
} as const;

/**
 * A path parameter that is text (a name, a key, a version, a file name) of at most `maxLength`
 * characters: the bound is enforced (a longer one is 400 `validation_failed` naming it) and
 * documented as the parameter's `maxLength`.
 */
export function TextParam(name: string, maxLength: number): ParameterDecorator {
  const bounded: PipeTransform<string, string> = {
    transform(value) {
      if (value.length <= maxLength) return value;
      const message = `${name} must be at most ${maxLength} characters`;
      throw new ValidationFailedError(message, [{ field: name, message }]);
    },
  };
  const param = Param(name, bounded);
  return (target, key, index) => {
    param(target, key, index);
    const descriptor = key === undefined ? undefined : Object.getOwnPropertyDescriptor(target, key);
    if (key !== undefined && descriptor)
      ApiParam({ name, required: true, schema: { type: 'string', maxLength } })(target, key, descriptor);
  };
}
