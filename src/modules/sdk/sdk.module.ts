import { Module } from '@nestjs/common';

/** Client SDK and example bundles for download. */
@Module({})
export class SdkModule {}
