import { Module } from '@nestjs/common';

/** Projects, test plans, coverage, trend and test-package recommendations. */
@Module({})
export class ProjectsModule {}
