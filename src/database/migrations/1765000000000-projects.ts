import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Projects, test plans and their versions, test-package recommendations. */
export class Projects1765000000000 implements MigrationInterface {
  name = 'Projects1765000000000';

  async up(q: QueryRunner): Promise<void> {
    void q;
  }

  async down(q: QueryRunner): Promise<void> {
    void q;
  }
}
