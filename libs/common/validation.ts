import { ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidationFailedError } from './domain-error.js';

function flatten(errors: ValidationError[], prefix = ''): Array<{ field: string; message: string }> {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    // Optional members skip validation when absent (ValidateIf / IsOptional), so a constraint that
    // failed on an absent value means the member is required: say so, not "must be one of …".
    if (error.value === undefined && error.constraints && Object.keys(error.constraints).length > 0) {
      return [{ field, message: `${field} is required` }];
    }
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      message:
        message.startsWith('property ') && message.endsWith('should not exist')
          ? `${field} is not accepted here`
          : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Global validation: unknown properties are refused (so server-owned fields such as id,
 * workspace_id on update, status or created_at cannot be mass-assigned), values are
 * converted to the DTO's types, and failures become a 400 listing each field.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    // The value is read to tell a missing member from a wrong one; no error message repeats it.
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => {
      const list = flatten(errors);
      const detail =
        list.length === 1
          ? list[0].message
          : `${list.length} fields are invalid: ${[...new Set(list.map((e) => e.field))].join(', ')}`;
      return new ValidationFailedError(detail, list);
    },
  });
}
