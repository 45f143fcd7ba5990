import { describe, expect, it } from '@jest/globals';
import { RouteTable } from './route-table.js';

describe('RouteTable', () => {
  const table = RouteTable.fromOpenApi({
    paths: {
      '/users/{user_id}': { get: {}, patch: {} },
      '/datasets/{dataset_id}/dimensions:assign': { post: {} },
      '/workspaces/{workspace_id}/metric-config-defaults/': { get: {}, post: {} },
    },
  });

  it('lists the methods of a path with parameters, adding HEAD for GET', () => {
    expect(table.allowedMethods('/users/8d5e…')).toEqual(['GET', 'HEAD', 'PATCH']);
  });

  it('matches literal colons and optional trailing slashes', () => {
    expect(table.allowedMethods('/datasets/abc/dimensions:assign')).toEqual(['POST']);
    expect(table.allowedMethods('/workspaces/abc/metric-config-defaults/')).toEqual(['GET', 'HEAD', 'POST']);
  });

  it('does not let a parameter span segments or a literal act as a pattern', () => {
    expect(table.allowedMethods('/users/a/b')).toEqual([]);
    expect(table.allowedMethods('/datasets/abc/dimensionsXassign')).toEqual([]);
  });

  it('reads a deferred document at the first lookup, and only then', () => {
    let reads = 0;
    const deferred = RouteTable.deferred(() => {
      reads++;
      return { paths: { '/users/{user_id}': { get: {} } } };
    });
    expect(reads).toBe(0);
    expect(deferred.allowedMethods('/users/1')).toEqual(['GET', 'HEAD']);
    expect(deferred.allowedMethods('/nowhere')).toEqual([]);
    expect(reads).toBe(1);
  });
});
