import { describe, expect, it } from '@jest/globals';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { getMetadataStorage, IsArray, IsString, MaxLength } from 'class-validator';
import { admitsNull } from '#libs/common/openapi-nullable.js';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_INT32 } from '#libs/common/json-limits.js';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

function controllers(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return controllers(path);
    return path.endsWith('.controller.ts') ? [path] : [];
  });
}

interface Metadata {
  propertyName: string;
  name?: string;
  type: string;
  constraints?: unknown[];
}

type Dto = new () => object;

interface DocumentedMember {
  nullable?: boolean;
  anyOf?: unknown[];
  maxLength?: number;
  maxItems?: number;
  items?: { maxLength?: number };
}

/** Validators that hold a string to a bound (a length, a list of values, a UUID's 36 characters, a trace id's length). */
const STRING_BOUNDS = new Set(['maxLength', 'isLength', 'isIn', 'isEnum', 'isUuid', 'isTraceRef']);
/** Validators that say a member is text. */
const TEXT = new Set(['isString', 'matches', 'isEmail', 'isUrl', 'isDateString', 'isIso8601']);

/** Request members whose text is bounded by a check of their own (named), with the bound the document states. */
const BOUNDED_BY_THEIR_OWN_CHECK: Record<string, string> = {
  'UpdateBrandingRequest.logo_url': 'isImageUrl: an https URL of 2048 characters or a data URL of 256 KiB decoded',
  'UpdateBrandingRequest.favicon_url': 'isImageUrl, the same',
  'UpdateBrandingRequest.support_url': 'isSupportUrl: an https URL of 2048 characters or a mailto: address of 320',
};

/**
 * Rules every request DTO follows, read from the class-validator metadata of every class a
 * controller takes as `@Body()` or `@Query()` (and the classes nested in them), so a new
 * member cannot forget them (docs/api-conventions.md: Limits, Null in request bodies):
 * - an integer has a `@Max` of at most 2^31 - 1, and a member with bounds is typed with
 *   `@IsInt`/`@IsNumber` (which refuse NaN and Infinity), so `?offset=1e308` or
 *   `"limit": 9007199254740993` is a 400 naming it, never PostgreSQL's "out of range";
 * - a body member takes `null` only where the OpenAPI document says `nullable`: `@IsOptional`
 *   (which lets null through) only there, `@ValidateIfPresent()` (libs/common/dto-decorators.ts) elsewhere;
 * - nested objects are declared with `@NestedObject`, which refuses an array in an object's place;
 * - a string has a bound it is refused past (`@MaxLength`, `@Length`, `@IsIn`, `@IsEnum`, `@IsUUID`)
 *   and a list an `@ArrayMaxSize`, and a body's schema in the document states the same bound
 *   (`maxLength`, `maxItems`), so what is enforced is what is documented (test/contract/openapi-owasp
 *   holds the document to the OWASP ruleset).
 */
describe('request DTOs', () => {
  const bodies = new Set<Dto>();
  const queries = new Set<Dto>();
  const storage = getMetadataStorage() as unknown as {
    getTargetValidationMetadatas(target: Dto, schema: string, always: boolean, strictGroups: boolean): Metadata[];
  };
  const document = JSON.parse(readFileSync(join(root, 'docs', 'openapi.json'), 'utf8')) as {
    components: { schemas: Record<string, { properties?: Record<string, DocumentedMember> }> };
  };

  /** Every DTO reachable from `roots` through @NestedObject, with the path it was reached by. */
  function reachable(roots: Set<Dto>): Map<Dto, string> {
    const seen = new Map<Dto, string>();
    const visit = (cls: Dto, via: string) => {
      if (seen.has(cls)) return;
      seen.set(cls, via);
      for (const m of storage.getTargetValidationMetadatas(cls, '', true, false)) {
        if (m.name === 'isNestedObject')
          visit((m.constraints![0] as () => Dto)(), `${via} > ${cls.name}.${m.propertyName}`);
      }
    };
    for (const cls of roots) visit(cls, cls.name);
    return seen;
  }

  const properties = (cls: Dto): Map<string, Metadata[]> => {
    const out = new Map<string, Metadata[]>();
    for (const m of storage.getTargetValidationMetadatas(cls, '', true, false))
      out.set(m.propertyName, [...(out.get(m.propertyName) ?? []), m]);
    return out;
  };

  it('are found: every controller argument typed with a class', async () => {
    for (const file of controllers(join(root, 'src'))) {
      const mod = (await import(file)) as Record<string, unknown>;
      for (const cls of Object.values(mod)) {
        if (typeof cls !== 'function') continue;
        for (const method of Object.getOwnPropertyNames(cls.prototype)) {
          const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, cls, method) ?? {}) as Record<
            string,
            { index: number }
          >;
          const types = (Reflect.getMetadata('design:paramtypes', cls.prototype, method) ?? []) as Dto[];
          for (const [key, arg] of Object.entries(args)) {
            const kind = Number(key.split(':')[0]);
            const type = types[arg.index];
            if (!type || !storage.getTargetValidationMetadatas(type, '', true, false).length) continue;
            if (kind === RouteParamtypes.BODY) bodies.add(type);
            if (kind === RouteParamtypes.QUERY) queries.add(type);
          }
        }
      }
    }
    expect(bodies.size).toBeGreaterThan(50);
    expect(queries.size).toBeGreaterThan(30);
  });

  /** Integers allowed past 2^31 - 1 (up to 2^53 - 1), with why. */
  const INT64_MEMBERS: Record<string, string> = {
    'EventsQuery.after': "a run event's seq: the service-wide event counter (bigint), which outgrows int32",
    'EventStreamQuery.after': 'the same seq, where the live stream of run events starts',
  };

  it('bound every integer (at most 2^31 - 1, or 2^53 - 1 for the int64 counters listed) and type every bounded member as a number', () => {
    const offenders: string[] = [];
    for (const [cls, via] of reachable(new Set([...bodies, ...queries]))) {
      for (const [property, metas] of properties(cls)) {
        const names = new Set(metas.map((m) => m.name));
        const max = metas.find((m) => m.name === 'max')?.constraints?.[0] as number | undefined;
        const limit = INT64_MEMBERS[`${via}.${property}`] ? Number.MAX_SAFE_INTEGER : MAX_INT32;
        if (names.has('isInt') && (max === undefined || max > limit))
          offenders.push(`${via}: ${property} is an integer without @Max(<= ${limit})`);
        if ((names.has('min') || names.has('max')) && !names.has('isInt') && !names.has('isNumber'))
          offenders.push(`${via}: ${property} has bounds but no @IsInt or @IsNumber (NaN and Infinity would pass)`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('let null through (@IsOptional) only where the document says nullable', () => {
    const offenders: string[] = [];
    for (const [cls, via] of reachable(bodies)) {
      for (const [property, metas] of properties(cls)) {
        if (!metas.some((m) => m.name === 'isOptional')) continue;
        if (!admitsNull(document.components.schemas[cls.name]?.properties?.[property]))
          offenders.push(
            `${via}: ${property} takes null (@IsOptional) but the document does not say nullable; use @ValidateIfPresent()`,
          );
      }
    }
    expect(offenders).toEqual([]);
  });

  it("declare nested objects with @NestedObject (an array in an object's place is refused)", () => {
    const offenders: string[] = [];
    for (const [cls, via] of reachable(new Set([...bodies, ...queries]))) {
      for (const [property, metas] of properties(cls)) {
        if (metas.some((m) => m.type === 'nestedValidation') && !metas.some((m) => m.name === 'isNestedObject'))
          offenders.push(`${via}: ${property} uses @ValidateNested without @NestedObject`);
      }
    }
    expect(offenders).toEqual([]);
  });

  /** What `cls` (reached by `via`) leaves unbounded, or enforces without documenting. */
  function boundOffenders(cls: Dto, via: string): string[] {
    const offenders: string[] = [];
    const documented = document.components.schemas[cls.name]?.properties ?? {};
    for (const [property, metas] of properties(cls)) {
      const names = new Set(metas.map((m) => m.name));
      const constraint = (name: string) => metas.find((m) => m.name === name)?.constraints?.[0] as number | undefined;
      const text = [...names].some((n) => TEXT.has(n!));
      if (
        text &&
        ![...names].some((n) => STRING_BOUNDS.has(n!)) &&
        !BOUNDED_BY_THEIR_OWN_CHECK[`${cls.name}.${property}`]
      )
        offenders.push(`${via}: ${property} is text without @MaxLength (or @IsIn, @IsEnum, @IsUUID)`);
      if (names.has('isArray') && !names.has('arrayMaxSize'))
        offenders.push(`${via}: ${property} is a list without @ArrayMaxSize`);
      // A class the document names (a body, a nested object) states what it enforces.
      if (!document.components.schemas[cls.name]) continue;
      const member = documented[property];
      const maxItems = constraint('arrayMaxSize');
      if (maxItems !== undefined && member?.maxItems !== maxItems)
        offenders.push(
          `${via}: ${property} enforces @ArrayMaxSize(${maxItems}) but documents maxItems ${member?.maxItems}`,
        );
      const maxLength = constraint('maxLength');
      const each = metas.find((m) => m.name === 'maxLength') as { each?: boolean } | undefined;
      const stated = each?.each ? member?.items?.maxLength : member?.maxLength;
      if (maxLength !== undefined && member && stated !== maxLength)
        offenders.push(`${via}: ${property} enforces @MaxLength(${maxLength}) but documents maxLength ${stated}`);
    }
    return offenders;
  }

  it('bound every string and list, and document the bound a body enforces', () => {
    const offenders = [...reachable(new Set([...bodies, ...queries]))].flatMap(([cls, via]) =>
      boundOffenders(cls, via),
    );
    expect(offenders).toEqual([]);
  });

  it('find an unbounded string and list, and a bound the document does not state (planted)', () => {
    class PlantedRequest {
      @IsString()
      name: string;
      @IsArray()
      tags: string[];
    }
    // Planted under a documented schema's name, enforcing a bound other than the one documented (1000).
    class CreateSecretRequest {
      @IsString()
      @MaxLength(7)
      description: string;
    }
    expect(boundOffenders(PlantedRequest, 'PlantedRequest')).toEqual([
      'PlantedRequest: name is text without @MaxLength (or @IsIn, @IsEnum, @IsUUID)',
      'PlantedRequest: tags is a list without @ArrayMaxSize',
    ]);
    expect(boundOffenders(CreateSecretRequest, 'CreateSecretRequest')).toEqual([
      'CreateSecretRequest: description enforces @MaxLength(7) but documents maxLength 1000',
    ]);
  });
});
