// jest project e2e-postgres: every file of this project runs on PostgreSQL (test/utils/database-mode.ts).
process.env.TEST_DATABASE = 'postgres';
