import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { MAX_PAGE_SIZE, PageOf, PageQueryDto, pageFrom, pageWindow, parseSort } from './pagination.js';

describe('pagination', () => {
  const parse = (q: Record<string, string>) => plainToInstance(PageQueryDto, q, { exposeDefaultValues: true });

  it('defaults to page 1 of 50 and converts query strings', () => {
    expect(parse({})).toEqual(expect.objectContaining({ page: 1, page_size: 50 }));
    const q = parse({ page: '3', page_size: '20' });
    expect(validateSync(q)).toHaveLength(0);
    expect(pageWindow(q)).toEqual({ skip: 40, take: 20 });
  });

  it(`refuses page sizes over ${MAX_PAGE_SIZE}, zero pages and non-numbers`, () => {
    expect(validateSync(parse({ page_size: String(MAX_PAGE_SIZE + 1) }))).not.toHaveLength(0);
    expect(validateSync(parse({ page: '0' }))).not.toHaveLength(0);
    expect(validateSync(parse({ page: 'abc' }))).not.toHaveLength(0);
  });

  it('pages a list held in memory, the total counting every item', () => {
    const all = ['a', 'b', 'c', 'd', 'e'];
    expect(pageFrom(all, parse({ page: '2', page_size: '2' }))).toEqual({
      items: ['c', 'd'],
      total: 5,
      page: 2,
      page_size: 2,
    });
    expect(pageFrom(all, parse({ page: '3', page_size: '2' })).items).toEqual(['e']);
    expect(pageFrom(all, parse({ page: '4', page_size: '2' })).items).toEqual([]);
  });

  it('parses sort fields against an allow-list, falling back for unknown ones', () => {
    const allowed = { name: 'w.name', created_at: 'w.created_at' };
    expect(parseSort('-name', allowed, '-created_at')).toEqual({ column: 'w.name', direction: 'DESC' });
    expect(parseSort(undefined, allowed, '-created_at')).toEqual({ column: 'w.created_at', direction: 'DESC' });
    expect(parseSort('password_hash', allowed, 'name')).toEqual({ column: 'w.name', direction: 'ASC' });
  });

  it('names page schemas after their item and reuses them', () => {
    class UserResponse {}
    expect(PageOf(UserResponse).name).toBe('UserResponsePage');
    expect(PageOf(UserResponse)).toBe(PageOf(UserResponse));
  });
});
