import { applicationDataSource } from './src/database/cli-data-source.js';

/**
 * The TypeORM CLI's data source (`npm run migration:generate`, `npx typeorm migration:show -d
 * dist/ormconfig.js`): the service's own options, entities and migrations, on DATABASE_URL.
 */
export default applicationDataSource();
