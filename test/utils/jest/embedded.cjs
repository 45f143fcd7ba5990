// jest project e2e-embedded: every file of this project runs on the embedded PGlite mode that
// `npm start` uses (test/utils/database-mode.ts).
process.env.TEST_DATABASE = 'embedded';
// Nothing from the shell points the app, a worker or a command at PostgreSQL or Redis.
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
