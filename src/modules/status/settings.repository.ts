import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { SettingEntity } from './entities/setting.entity.js';

@Injectable()
export class SettingsRepository {
  constructor(@InjectRepository(SettingEntity) private readonly settings: Repository<SettingEntity>) {}

  private repo(manager?: EntityManager): Repository<SettingEntity> {
    return manager ? manager.getRepository(SettingEntity) : this.settings;
  }

  find(key: string, manager?: EntityManager): Promise<SettingEntity | null> {
    return this.repo(manager).findOne({ where: { key } });
  }

  /**
   * Serialises writers of one key until the transaction ends. A transaction-scoped advisory
   * lock works before the row exists, which a row lock (FOR UPDATE) does not.
   */
  async lock(key: string, manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`settings:${key}`]);
  }

  /** Writes the value and bumps the version (1 for a new key); call under lock(). */
  async write(key: string, value: Record<string, unknown>, updatedBy: string | null, manager: EntityManager): Promise<SettingEntity> {
    const repo = this.repo(manager);
    const current = await repo.findOne({ where: { key } });
    if (current) {
      await repo.update({ key }, { value, updatedBy, version: current.version + 1, updatedAt: () => 'now()' } as never);
    } else {
      await repo.save(repo.create({ key, value, updatedBy, version: 1 }));
    }
    return (await repo.findOne({ where: { key } }))!;
  }
}
