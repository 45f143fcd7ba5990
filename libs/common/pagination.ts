import { Type as TypeOf } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The largest page any list returns; asking for more is a 400, documented in docs/api-conventions.md. */
export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 50;

/** `?page=&page_size=` shared by every paged list; extend it with a list's own filters. */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, default: 1, description: '1-based page number' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page: number = 1;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  page_size: number = DEFAULT_PAGE_SIZE;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

export function pageOf<E, T>(rows: E[], total: number, query: PageQueryDto, map: (row: E) => T): Page<T> {
  return { items: rows.map(map), total, page: query.page, page_size: query.page_size };
}

/** The asked page of a list held whole in memory (a catalogue merged from built-ins and rows). */
export function pageFrom<T>(all: T[], query: PageQueryDto): Page<T> {
  const { skip, take } = pageWindow(query);
  return { items: all.slice(skip, skip + take), total: all.length, page: query.page, page_size: query.page_size };
}

/** skip/take for a repository from the page query. */
export function pageWindow(query: PageQueryDto): { skip: number; take: number } {
  return { skip: (query.page - 1) * query.page_size, take: query.page_size };
}

const pageClasses = new Map<TypeOf<unknown>, TypeOf<Page<unknown>>>();

/** The Swagger schema of Page<X>: `PageOf(UserResponse)` is named `UserResponsePage`. */
export function PageOf<T>(item: TypeOf<T>): TypeOf<Page<T>> {
  const cached = pageClasses.get(item);
  if (cached) return cached as TypeOf<Page<T>>;
  class PageDto implements Page<T> {
    @ApiProperty({ type: () => [item] })
    items: T[];
    @ApiProperty({ description: 'Number of items matching the filters, across all pages', example: 42 })
    total: number;
    @ApiProperty({ minimum: 1, example: 1 })
    page: number;
    @ApiProperty({ minimum: 1, maximum: MAX_PAGE_SIZE, example: DEFAULT_PAGE_SIZE })
    page_size: number;
  }
  Object.defineProperty(PageDto, 'name', { value: `${item.name}Page` });
  pageClasses.set(item, PageDto);
  return PageDto;
}

/**
 * Parses `sort=field` / `sort=-field` against the fields a list allows.
 * Returns what `allowed` gives the field (a column, or a sort key the repository turns into a
 * typed ORDER BY) and the direction.
 */
export function parseSort<F extends string, C extends string = string>(
  sort: string | undefined,
  allowed: Record<F, C>,
  fallback: NoInfer<F> | `-${NoInfer<F>}`,
): { column: C; direction: 'ASC' | 'DESC' } {
  const value = sort ?? fallback;
  const desc = value.startsWith('-');
  const field = (desc ? value.slice(1) : value) as F;
  return { column: allowed[field] ?? allowed[fallback.replace(/^-/, '') as F], direction: desc ? 'DESC' : 'ASC' };
}
