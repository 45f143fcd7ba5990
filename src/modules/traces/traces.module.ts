import { Module } from '@nestjs/common';

/** Trace ingestion: detection, uploads, landing, drops, ground truth, topology, enrichment and tags. */
@Module({})
export class TracesModule {}
