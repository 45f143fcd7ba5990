import type { RunsRepository } from './runs.repository.js';

type AnswerRow = Parameters<RunsRepository['saveOutcomes']>[1][number];

/**
 * Answers written as they come, several to a statement (group commit): the first answer is
 * written at once, and those arriving while a write is in flight go together in the next. Each
 * `save` settles when the statement carrying its answer has committed, so an answer counts as
 * saved exactly when it did before (a crash before that commit calls the SUT for it again on
 * resume), but a run of many fast answers makes tens of commits a second, not one per answer.
 */
export class AnswerWriter<Row = AnswerRow> {
  private waiting: Array<{ row: Row; resolve: () => void; reject: (err: unknown) => void }> = [];
  private writing = false;

  constructor(
    private readonly write: (batch: Row[]) => Promise<void>,
    private readonly max = 500,
  ) {}

  save(row: Row): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.writing || !this.waiting.length) return;
    const batch = this.waiting.splice(0, this.max);
    this.writing = true;
    this.write(batch.map((w) => w.row)).then(
      () => this.settle(batch, (w) => w.resolve()),
      (err: unknown) => this.settle(batch, (w) => w.reject(err)),
    );
  }

  private settle(batch: typeof this.waiting, each: (w: (typeof this.waiting)[number]) => void): void {
    this.writing = false;
    batch.forEach(each);
    this.next();
  }
}
