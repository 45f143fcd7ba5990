import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Reports and their sections, report configs, settings and section prompts. */
export class Reports1765100000000 implements MigrationInterface {
  name = 'Reports1765100000000';

  async up(q: QueryRunner): Promise<void> {
    void q;
  }

  async down(q: QueryRunner): Promise<void> {
    void q;
  }
}
