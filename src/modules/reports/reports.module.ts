import { Module } from '@nestjs/common';

/** Reports from runs, report configs, settings and section prompts. */
@Module({})
export class ReportsModule {}
