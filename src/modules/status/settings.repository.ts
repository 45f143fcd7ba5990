import { Injectable } from '@nestjs/common';
import { Repository } from 'typeorm';
import { SettingEntity } from './entities/setting.entity.js';
import { Db } from '#libs/database/unit-of-work.js';

@Injectable()
export class SettingsRepository {
  constructor(private readonly db: Db) {}

  private get settings() {
    return this.db.repository(SettingEntity);
  }

  private repo(): Repository<SettingEntity> {
    return this.settings;
  }

  find(key: string): Promise<SettingEntity | null> {
    return this.repo().findOne({ where: { key } });
  }

  /**
   * Serialises writers of one key until the transaction ends. A transaction-scoped advisory
   * lock works before the row exists, which a row lock (FOR UPDATE) does not.
   */
  async lock(key: string): Promise<void> {
    await this.db.lock(`settings:${key}`);
  }

  /** Writes the value and bumps the version (1 for a new key); call under lock(). */
  async write(key: string, value: Record<string, unknown>, updatedBy: string | null): Promise<SettingEntity> {
    const repo = this.repo();
    const current = await repo.findOne({ where: { key } });
    if (current) {
      await repo.update({ key }, { value, updatedBy, version: current.version + 1, updatedAt: () => 'now()' } as never);
    } else {
      await repo.save(repo.create({ key, value, updatedBy, version: 1 }));
    }
    return (await repo.findOne({ where: { key } }))!;
  }
}
