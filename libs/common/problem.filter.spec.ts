import { describe, expect, it } from '@jest/globals';
import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import type { Request } from 'express';
import { pino } from 'pino';
import { DomainError, NotFoundError } from './domain-error.js';
import { defineErrorCodes } from './error-codes.js';
import { mapDatabaseError, ProblemFilter } from './problem.filter.js';
import { RouteTable } from './route-table.js';

const routes = RouteTable.fromOpenApi({ paths: { '/things/{id}': { get: {} } } });
const filter = new ProblemFilter(pino({ level: 'silent' }), routes);
const req = (method: string, path: string) => ({ method, path, originalUrl: path }) as Request;

describe('ProblemFilter.map', () => {
  it('maps a domain error through the registry, keeping extensions and headers', () => {
    const codes = defineErrorCodes('spec', { spec_teapot: { status: 418, title: 'Teapot', description: 'for tests' } });
    const { problem, headers } = filter.map(
      new DomainError(codes.spec_teapot, 'short and stout', { pot: 1 }, { 'X-Pot': 'yes' }),
      req('GET', '/'),
    );
    expect(problem).toEqual(
      expect.objectContaining({
        type: '/problems/spec-teapot',
        title: 'Teapot',
        status: 418,
        detail: 'short and stout',
        error_code: 'spec_teapot',
        pot: 1,
      }),
    );
    expect(headers).toEqual({ 'X-Pot': 'yes' });
  });

  it('tells an unknown route (404) from a wrong method (405 with Allow)', () => {
    const unknown = filter.map(new NotFoundException('Cannot GET /nope'), req('GET', '/nope'));
    expect(unknown.problem).toEqual(expect.objectContaining({ status: 404, error_code: 'route_not_found' }));
    const wrong = filter.map(new NotFoundException('Cannot DELETE /things/1'), req('DELETE', '/things/1'));
    expect(wrong.problem).toEqual(expect.objectContaining({ status: 405, error_code: 'method_not_allowed' }));
    expect(wrong.headers).toEqual({ Allow: 'GET, HEAD' });
  });

  it('keeps the status of framework HTTP exceptions', () => {
    expect(filter.map(new PayloadTooLargeException(), req('POST', '/x')).problem).toEqual(
      expect.objectContaining({ status: 413, error_code: 'payload_too_large' }),
    );
    expect(filter.map(new BadRequestException('bad'), req('POST', '/x')).problem).toEqual(
      expect.objectContaining({ status: 400, detail: 'bad' }),
    );
  });

  it('never leaks internals of unexpected errors', () => {
    const { problem } = filter.map(new Error('password=hunter2 at /srv/secret.ts:12'), req('GET', '/x'));
    expect(problem).toEqual(
      expect.objectContaining({ status: 500, error_code: 'internal_error', detail: 'An unexpected error occurred' }),
    );
    expect(JSON.stringify(problem)).not.toContain('hunter2');
  });

  it('maps not found errors with the resource kind', () => {
    expect(filter.map(new NotFoundError('dataset', 'abc'), req('GET', '/x')).problem).toEqual(
      expect.objectContaining({
        status: 404,
        error_code: 'not_found',
        detail: 'dataset abc was not found',
        resource: 'dataset',
      }),
    );
  });
});

describe('mapDatabaseError', () => {
  it('turns unique violations into 409 naming the key', () => {
    const mapped = mapDatabaseError({
      driverError: {
        code: '23505',
        detail: 'Key (lower(email))=(a@b.c) already exists.',
        constraint: 'users_email_key',
      },
    });
    expect(mapped?.problem).toEqual(
      expect.objectContaining({ status: 409, error_code: 'unique_violation', constraint: 'users_email_key' }),
    );
    expect(mapped?.problem.detail).toBe('A record with the same email already exists');
  });

  it('turns invalid text representations into 400 and lost connections into 503 with Retry-After', () => {
    expect(mapDatabaseError({ driverError: { code: '22P02' } })?.problem.status).toBe(400);
    // A referenced row: PostgreSQL 15 says foreign_key_violation, PostgreSQL 17 (PGlite) restrict_violation for ON DELETE RESTRICT.
    for (const code of ['23503', '23001']) {
      expect(
        mapDatabaseError({ driverError: { code, constraint: 'sut_connections_secret_id_fkey' } })?.problem,
      ).toEqual(
        expect.objectContaining({ status: 409, error_code: 'conflict', constraint: 'sut_connections_secret_id_fkey' }),
      );
    }
    const nul = mapDatabaseError({
      driverError: { code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0x00' },
    });
    expect(nul?.problem).toEqual(
      expect.objectContaining({ status: 400, error_code: 'validation_failed', detail: expect.stringContaining('NUL') }),
    );
    expect(mapDatabaseError({ driverError: { code: '22P05' } })?.problem.status).toBe(400);
    expect(
      mapDatabaseError({
        driverError: { code: '22003', message: 'value "9007199254740993" is out of range for type integer' },
      })?.problem,
    ).toEqual(
      expect.objectContaining({
        status: 400,
        error_code: 'validation_failed',
        detail: 'A number is out of range for its field',
      }),
    );
    const down = mapDatabaseError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' });
    expect(down?.problem.status).toBe(503);
    expect(down?.headers).toEqual({ 'Retry-After': '5' });
    expect(mapDatabaseError(new Error('Connection terminated unexpectedly'))?.problem.status).toBe(503);
    expect(mapDatabaseError({ driverError: { code: '57P01' } })?.problem.status).toBe(503);
    expect(
      mapDatabaseError({ code: '55000', message: 'database "x" is not currently accepting connections' })?.problem
        .status,
    ).toBe(503);
  });

  it('leaves other errors alone', () => {
    expect(mapDatabaseError(new Error('boom'))).toBeUndefined();
  });
});
