/**
 * The values at some paths of a JSON document that arrives in chunks, each handed over as soon as
 * it is complete, in document order. Only the document's skeleton (the containers on the way to
 * those paths) is walked here, byte by byte; every value off or at the end of a path is found by
 * its brackets and quotes and parsed by JSON.parse, so the whole document is still checked and
 * what is kept is built natively. A tokenising parser (@streamparser/json) spent several times
 * as long on the same spans (docs/performance.md#trace-landing).
 *
 * Paths are JSONPath of the simple kind `$.a.*.b`: member names, and `*` for any member or element.
 */

import { JSON_CHAR } from '#libs/common/json-limits.js';

/** One value found: the member name (or element index) it stood at, and how deeply it nests. */
export interface JsonPathValue {
  value: unknown;
  key: string | number;
  /** Levels of `[`/`{` nesting of the value itself (0 for a string, number, true, false or null). */
  depth: number;
}

export class JsonValuesError extends Error {}

interface Frame {
  array: boolean;
  /** The member name being read, or the element index. */
  key: string | number;
}

const enum State {
  Value,
  FirstMember,
  Member,
  Key,
  Colon,
  FirstElement,
  AfterValue,
  Leaf,
  End,
}

const { QUOTE, BACKSLASH, COMMA, COLON, OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT } = JSON_CHAR;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Splits a JSON document fed chunk by chunk (`write`, then `end`) into the values at `paths`.
 * Throws a JsonValuesError when the document stops being JSON.
 */
export class JsonPathSplitter {
  private readonly patterns: string[][];
  private buf: Buffer = Buffer.alloc(0);
  /** Where scanning goes on in `buf`. */
  private pos = 0;
  /** Bytes of the document before `buf`: for the position in error messages. */
  private consumed = 0;
  private state = State.Value;
  private readonly frames: Frame[] = [];
  /** Where the current key or leaf starts in `buf`. */
  private start = 0;
  private key = '';
  private leaf = { capture: false, depth: 0, deepest: 0, inString: false, escaped: false, primitive: false };
  private out: JsonPathValue[] = [];

  constructor(paths: string[]) {
    this.patterns = paths.map((p) => {
      if (!p.startsWith('$')) throw new Error(`a path starts with $: ${p}`);
      return p === '$' ? [] : p.slice(2).split('.');
    });
  }

  /** Reads one more chunk; answers the values it completed. */
  write(chunk: Buffer): JsonPathValue[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    this.scan(false);
    this.trim();
    return this.take();
  }

  /** The end of the document: answers the last values, or throws when the document is incomplete. */
  end(): JsonPathValue[] {
    this.scan(true);
    if (this.state !== State.End) throw this.error(this.frames.length || this.state !== State.Value ? 'end' : 'empty');
    return this.take();
  }

  private take(): JsonPathValue[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  /** Whether the unfinished token or leaf needs the bytes already read. */
  private keepsBytes(): boolean {
    return this.state === State.Key || this.state === State.Leaf;
  }

  /** Drops the bytes no unfinished token needs. */
  private trim(): void {
    const from = this.keepsBytes() ? this.start : this.pos;
    if (from === 0) return;
    this.consumed += from;
    this.buf = this.buf.subarray(from);
    this.pos -= from;
    this.start -= from;
  }

  private error(what: 'end' | 'empty' | number): JsonValuesError {
    if (what === 'end') return new JsonValuesError('Unexpected end of the document');
    if (what === 'empty') return new JsonValuesError('The document is empty');
    const at = this.consumed + what;
    return new JsonValuesError(`Unexpected ${JSON.stringify(String.fromCharCode(this.buf[what]))} at byte ${at}`);
  }

  /** Whether the path of the value about to start is one of `paths` (capture) or on the way to one (descend). */
  private where(): 'capture' | 'descend' | 'skip' {
    const frames = this.frames;
    let descend = false;
    for (const pattern of this.patterns) {
      if (pattern.length < frames.length) continue;
      let match = true;
      for (let i = 0; match && i < frames.length; i++)
        match = pattern[i] === '*' || pattern[i] === String(frames[i].key);
      if (!match) continue;
      if (pattern.length === frames.length) return 'capture';
      descend = true;
    }
    return descend ? 'descend' : 'skip';
  }

  private scan(final: boolean): void {
    const buf = this.buf;
    const length = buf.length;
    while (this.pos < length || (final && this.state === State.Leaf)) {
      if (this.state === State.Leaf) {
        if (!this.scanLeaf(final)) return;
        continue;
      }
      if (this.state === State.Key) {
        // Keys are short: an unfinished one is scanned again from its start with the next chunk.
        const close = this.stringEnd(this.start + 1);
        if (close < 0) return;
        this.key = JSON.parse(buf.toString('utf8', this.start, close + 1)) as string;
        this.pos = close + 1;
        this.state = State.Colon;
        continue;
      }
      const c = buf[this.pos];
      if (isSpace(c)) {
        this.pos++;
        continue;
      }
      switch (this.state) {
        case State.Value: {
          const where = this.where();
          if (where === 'descend' && (c === OPEN_OBJECT || c === OPEN_ARRAY)) {
            this.frames.push({ array: c === OPEN_ARRAY, key: c === OPEN_ARRAY ? 0 : '' });
            this.state = c === OPEN_ARRAY ? State.FirstElement : State.FirstMember;
            this.pos++;
          } else {
            this.start = this.pos;
            this.leaf = {
              capture: where === 'capture',
              depth: 0,
              deepest: 0,
              inString: false,
              escaped: false,
              primitive: c !== OPEN_OBJECT && c !== OPEN_ARRAY && c !== QUOTE,
            };
            this.state = State.Leaf;
          }
          break;
        }
        case State.FirstMember:
        case State.Member:
          if (c === CLOSE_OBJECT && this.state === State.FirstMember) {
            this.frames.pop();
            this.state = State.AfterValue;
            this.pos++;
          } else if (c === QUOTE) {
            this.start = this.pos;
            this.state = State.Key;
            this.pos++;
          } else throw this.error(this.pos);
          break;
        case State.Colon:
          if (c !== COLON) throw this.error(this.pos);
          this.frames[this.frames.length - 1].key = this.key;
          this.state = State.Value;
          this.pos++;
          break;
        case State.FirstElement:
          if (c === CLOSE_ARRAY) {
            this.frames.pop();
            this.state = State.AfterValue;
            this.pos++;
          } else this.state = State.Value;
          break;
        case State.AfterValue: {
          const top = this.frames[this.frames.length - 1];
          if (!top) {
            this.state = State.End;
            break;
          }
          if (c === COMMA) {
            if (top.array) {
              top.key = (top.key as number) + 1;
              this.state = State.Value;
            } else this.state = State.Member;
          } else if (c === (top.array ? CLOSE_ARRAY : CLOSE_OBJECT)) {
            this.frames.pop();
          } else throw this.error(this.pos);
          this.pos++;
          break;
        }
        case State.End:
          throw this.error(this.pos);
      }
    }
    if (this.state === State.AfterValue && !this.frames.length) this.state = State.End;
  }

  /** The closing quote of the string whose inside starts at `from`, or -1 when it is not in the buffer yet. */
  private stringEnd(from: number): number {
    const buf = this.buf;
    for (let i = from; i < buf.length; i++) {
      const c = buf[i];
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) return i;
    }
    return -1;
  }

  /** Scans the current leaf on; answers true when it ended (and was parsed), false when more bytes are needed. */
  private scanLeaf(final: boolean): boolean {
    const buf = this.buf;
    const length = buf.length;
    const leaf = this.leaf;
    let i = this.pos;
    let end = -1;
    if (leaf.primitive) {
      for (; i < length; i++) {
        const c = buf[i];
        if (c === COMMA || c === CLOSE_ARRAY || c === CLOSE_OBJECT || isSpace(c)) break;
      }
      if (i < length || final) end = i;
    } else {
      let depth = leaf.depth;
      let deepest = leaf.deepest;
      let inString = leaf.inString;
      let escaped = leaf.escaped;
      for (; i < length; i++) {
        const c = buf[i];
        if (escaped) escaped = false;
        else if (inString) {
          if (c === BACKSLASH) escaped = true;
          else if (c === QUOTE) {
            inString = false;
            if (depth === 0) {
              end = i + 1;
              break;
            }
          }
        } else if (c === QUOTE) inString = true;
        else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
          if (++depth > deepest) deepest = depth;
        } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
          if (--depth === 0) {
            end = i + 1;
            break;
          }
        }
      }
      leaf.depth = depth;
      leaf.deepest = deepest;
      leaf.inString = inString;
      leaf.escaped = escaped;
    }
    if (end < 0) {
      this.pos = i;
      if (final) throw this.error('end');
      return false;
    }
    const text = buf.toString('utf8', this.start, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new JsonValuesError(`${(err as Error).message} (the value at byte ${this.consumed + this.start})`);
    }
    if (leaf.capture) {
      const top = this.frames[this.frames.length - 1];
      this.out.push({ value, key: top ? top.key : '', depth: leaf.deepest });
    }
    this.pos = end;
    this.state = State.AfterValue;
    return true;
  }
}
