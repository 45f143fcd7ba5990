import { Module } from '@nestjs/common';
import { SdkController } from './sdk.controller.js';
import { SdkService } from './sdk.service.js';
import './sdk.errors.js';

/** Client SDK and example bundles for download. */
@Module({
  controllers: [SdkController],
  providers: [SdkService],
})
export class SdkModule {}
