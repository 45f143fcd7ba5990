import { Param, ParseUUIDPipe } from '@nestjs/common';
import { DomainError } from './domain-error.js';
import { CommonErrors } from './error-codes.js';

/** A path parameter that must be a UUID; anything else is 400 invalid_identifier. */
export const UuidParam = (name: string) =>
  Param(name, new ParseUUIDPipe({ exceptionFactory: () => new DomainError(CommonErrors.invalid_identifier, `${name} must be a UUID`) }));
