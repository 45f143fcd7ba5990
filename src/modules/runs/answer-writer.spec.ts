import { describe, expect, it } from '@jest/globals';
import { AnswerWriter } from './answer-writer.js';

/** A write that stays in flight until the test lets it finish. */
function heldWrites() {
  const batches: number[][] = [];
  const finish: Array<(err?: Error) => void> = [];
  const write = (batch: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(batch);
      finish.push((err) => (err ? reject(err) : resolve()));
    });
  return { batches, finish, write };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("AnswerWriter (group commit of a run's answers)", () => {
  it('writes the first answer at once and those arriving meanwhile together in the next statement', async () => {
    const { batches, finish, write } = heldWrites();
    const writer = new AnswerWriter<number>(write);
    const saved: number[] = [];
    const saves = [1, 2, 3, 4].map((n) => writer.save(n).then(() => saved.push(n)));
    await tick();
    expect(batches).toEqual([[1]]);
    expect(saved).toEqual([]);
    finish[0]();
    await tick();
    expect(saved).toEqual([1]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
    finish[1]();
    await Promise.all(saves);
    expect(saved).toEqual([1, 2, 3, 4]);
  });

  it('settles a save only when the statement carrying it has committed, and fails every answer of a failed one', async () => {
    const { batches, finish, write } = heldWrites();
    const writer = new AnswerWriter<number>(write);
    const first = writer.save(1);
    const second = writer.save(2);
    const third = writer.save(3);
    finish[0](new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await tick();
    expect(batches[1]).toEqual([2, 3]);
    finish[1](new Error('still down'));
    await expect(second).rejects.toThrow('still down');
    await expect(third).rejects.toThrow('still down');
    // The writer goes on after a failure: a later answer is written.
    const fourth = writer.save(4);
    await tick();
    expect(batches[2]).toEqual([4]);
    finish[2]();
    await expect(fourth).resolves.toBeUndefined();
  });

  it('puts at most `max` answers in one statement', async () => {
    const { batches, finish, write } = heldWrites();
    const writer = new AnswerWriter<number>(write, 2);
    const saves = [1, 2, 3, 4, 5, 6].map((n) => writer.save(n));
    for (let i = 0; i < 4; i++) {
      await tick();
      finish[i]?.();
    }
    await Promise.all(saves);
    expect(batches).toEqual([[1], [2, 3], [4, 5], [6]]);
  });
});
