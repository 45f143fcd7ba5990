import { Module } from '@nestjs/common';
import { TemplatesController } from './templates.controller.js';
import { TemplatesService } from './templates.service.js';
import './projects.errors.js';

/**
 * The built-in project templates (GET /templates), a module of their own so the application
 * lists it where the templates' routes have always been served (after status and branding).
 */
@Module({
  controllers: [TemplatesController],
  providers: [TemplatesService],
})
export class TemplatesModule {}
