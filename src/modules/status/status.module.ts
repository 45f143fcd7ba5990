import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BrandingController } from './branding.controller.js';
import { BrandingService } from './branding.service.js';
import { SettingEntity } from './entities/setting.entity.js';
import { SettingsRepository } from './settings.repository.js';
import { StatusController } from './status.controller.js';
import { StatusService } from './status.service.js';

/** Status probes and branding. */
@Module({
  imports: [TypeOrmModule.forFeature([SettingEntity])],
  controllers: [StatusController, BrandingController],
  providers: [StatusService, BrandingService, SettingsRepository],
})
export class StatusModule {}
