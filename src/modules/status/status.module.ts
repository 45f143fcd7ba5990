import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BrandingController } from './branding.controller.js';
import { BrandingService } from './branding.service.js';
import { SettingEntity } from './entities/setting.entity.js';
import { SettingsRepository } from './settings.repository.js';
import { StatusController } from './status.controller.js';
import { StatusService } from './status.service.js';
import { TemplatesController } from './templates.controller.js';
import { TemplatesService } from './templates.service.js';
import './status.errors.js';

/** Status probes, branding and the built-in project templates. */
@Module({
  imports: [TypeOrmModule.forFeature([SettingEntity])],
  controllers: [StatusController, BrandingController, TemplatesController],
  providers: [StatusService, BrandingService, SettingsRepository, TemplatesService],
  exports: [SettingsRepository],
})
export class StatusModule {}
