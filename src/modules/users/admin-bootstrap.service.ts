import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { AuditService } from '#libs/audit/audit.service.js';
import { PasswordHasher } from '#libs/auth/password-hasher.js';
import { AppConfig } from '#libs/config/app-config.js';
import { isUniqueViolation } from '#libs/database/database-errors.js';
import { UsersRepository } from './users.repository.js';

/**
 * First start: when no user exists, creates the system admin named by ADMIN_EMAIL with
 * ADMIN_PASSWORD, or with a random password printed once to stderr. Only a process that serves
 * HTTP does: a worker started first (scaled out, perhaps without ADMIN_PASSWORD) would otherwise
 * create the admin with a password only its own log shows, and the API's would be ignored.
 */
@Injectable()
export class AdminBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('AdminBootstrap');

  constructor(
    private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditService,
    private readonly http: HttpAdapterHost,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // A worker's application context has no HTTP adapter.
    if (!this.http.httpAdapter) return;
    if ((await this.users.count()) > 0) return;
    const email = this.config.env.ADMIN_EMAIL.toLowerCase();
    const generated = !this.config.env.ADMIN_PASSWORD;
    const password = this.config.env.ADMIN_PASSWORD ?? randomBytes(18).toString('base64url');
    let user;
    try {
      user = await this.users.create({
        email,
        displayName: 'Administrator',
        passwordHash: await this.hasher.hash(password),
        systemRole: 'admin',
      });
    } catch (err) {
      // Another process created the first user at the same time.
      if (isUniqueViolation(err)) return;
      throw err;
    }
    await this.audit.record({
      action: 'user.bootstrap_admin_created',
      targetType: 'user',
      targetId: user.id,
      details: { email },
    });
    if (generated) {
      process.stderr.write(
        `\n  First start: created system admin ${email}\n  Generated password (shown once, change it): ${password}\n\n`,
      );
    }
    this.logger.log(
      `created the first system admin ${email}${generated ? ' with a generated password (printed to stderr)' : ''}`,
    );
  }
}
