import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import type { InvitationState } from './entities/workspace-invitation.entity.js';
import { WorkspaceInvitationEntity } from './entities/workspace-invitation.entity.js';

/** SQL for the derived state: pending past its expiry reads as expired. */
const STATE_SQL = `CASE WHEN i.status = 'pending' AND i.expires_at <= now() THEN 'expired' ELSE i.status END`;

@Injectable()
export class InvitationsRepository {
  constructor(@InjectRepository(WorkspaceInvitationEntity) private readonly repo: Repository<WorkspaceInvitationEntity>) {}

  list(workspaceId: string, state?: InvitationState): Promise<WorkspaceInvitationEntity[]> {
    const qb = this.repo.createQueryBuilder('i').where('i.workspace_id = :workspaceId', { workspaceId });
    if (state) qb.andWhere(`${STATE_SQL} = :state`, { state });
    return qb.orderBy('i.created_at', 'DESC').addOrderBy('i.id', 'ASC').getMany();
  }

  findForUpdate(workspaceId: string, id: string, manager: EntityManager): Promise<WorkspaceInvitationEntity | null> {
    return manager.getRepository(WorkspaceInvitationEntity).findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  findByTokenHashForUpdate(tokenHash: string, manager: EntityManager): Promise<WorkspaceInvitationEntity | null> {
    return manager.getRepository(WorkspaceInvitationEntity).findOne({ where: { tokenHash }, lock: { mode: 'pessimistic_write' } });
  }

  /** A pending (not yet expired) invitation of this email to this workspace. */
  async findLivePending(workspaceId: string, email: string, manager: EntityManager): Promise<WorkspaceInvitationEntity | null> {
    return manager
      .getRepository(WorkspaceInvitationEntity)
      .createQueryBuilder('i')
      .where("i.workspace_id = :workspaceId AND lower(i.email) = lower(:email) AND i.status = 'pending'", { workspaceId, email })
      .getOne();
  }

  async insert(invitation: Partial<WorkspaceInvitationEntity>, manager: EntityManager): Promise<WorkspaceInvitationEntity> {
    const repo = manager.getRepository(WorkspaceInvitationEntity);
    const saved = await repo.save(repo.create(invitation));
    return (await repo.findOne({ where: { id: saved.id } }))!;
  }

  async save(invitation: WorkspaceInvitationEntity, manager: EntityManager): Promise<WorkspaceInvitationEntity> {
    const repo = manager.getRepository(WorkspaceInvitationEntity);
    await repo.save(invitation);
    return (await repo.findOne({ where: { id: invitation.id } }))!;
  }

  /** Frees the (workspace, email) pending slot held by an expired invitation before a new one. */
  async retireExpired(id: string, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE workspace_invitations SET status = 'revoked', revoked_at = now(), updated_at = now() WHERE id = $1`, [id]);
  }
}
