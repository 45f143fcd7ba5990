import { Injectable } from '@nestjs/common';
import packageJson from '../../../package.json' with { type: 'json' };
import type { LiveResponse } from './dto/status.dto.js';

@Injectable()
export class StatusService {
  live(): LiveResponse {
    return { status: 'ok', uptime_seconds: Math.round(process.uptime()), version: packageJson.version };
  }
}
