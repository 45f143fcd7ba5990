import { Param, ParseUUIDPipe } from '@nestjs/common';
import { DomainError } from './domain-error.js';
import { CommonErrors } from './error-codes.js';

/** The path parameters declared with UuidParam, which the OpenAPI document types as `format: uuid`. */
export const UUID_PATH_PARAMETERS = new Set<string>();

/** A path parameter that must be a UUID; anything else is 400 invalid_identifier. */
export const UuidParam = (name: string) => {
  UUID_PATH_PARAMETERS.add(name);
  return Param(
    name,
    new ParseUUIDPipe({
      exceptionFactory: () => new DomainError(CommonErrors.invalid_identifier, `${name} must be a UUID`),
    }),
  );
};
