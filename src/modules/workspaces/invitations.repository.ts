import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import type { InvitationState } from './entities/workspace-invitation.entity.js';
import { WorkspaceInvitationEntity } from './entities/workspace-invitation.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';

/** SQL for the derived state: pending past its expiry reads as expired. */
const STATE_SQL = `CASE WHEN i.status = 'pending' AND i.expires_at <= now() THEN 'expired' ELSE i.status END`;

@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(WorkspaceInvitationEntity);
  }

  list(workspaceId: string, state?: InvitationState): Promise<WorkspaceInvitationEntity[]> {
    const qb = this.repo.createQueryBuilder('i').where('i.workspace_id = :workspaceId', { workspaceId });
    if (state) qb.andWhere(`${STATE_SQL} = :state`, { state });
    return qb.orderBy('i.created_at', 'DESC').addOrderBy('i.id', 'ASC').getMany();
  }

  findForUpdate(workspaceId: string, id: string): Promise<WorkspaceInvitationEntity | null> {
    return this.repo.findOne({ where: { id, workspaceId }, lock: { mode: 'pessimistic_write' } });
  }

  findByTokenHashForUpdate(tokenHash: string): Promise<WorkspaceInvitationEntity | null> {
    return this.repo.findOne({ where: { tokenHash }, lock: { mode: 'pessimistic_write' } });
  }

  /** Until the transaction ends, no other unit of work invites this e-mail to this workspace (two at once would both find none pending). */
  lockEmail(workspaceId: string, email: string): Promise<void> {
    return this.db.lock(`invitation:${workspaceId}:${email.toLowerCase()}`);
  }

  /** A pending (not yet expired) invitation of this email to this workspace. */
  async findLivePending(workspaceId: string, email: string): Promise<WorkspaceInvitationEntity | null> {
    return this.db
      .repository(WorkspaceInvitationEntity)
      .createQueryBuilder('i')
      .where("i.workspace_id = :workspaceId AND lower(i.email) = lower(:email) AND i.status = 'pending'", {
        workspaceId,
        email,
      })
      .getOne();
  }

  async insert(invitation: Partial<WorkspaceInvitationEntity>): Promise<WorkspaceInvitationEntity> {
    const repo = this.repo;
    const saved = await repo.save(repo.create(invitation));
    return (await repo.findOne({ where: { id: saved.id } }))!;
  }

  async save(invitation: WorkspaceInvitationEntity): Promise<WorkspaceInvitationEntity> {
    const repo = this.repo;
    await repo.save(invitation);
    return (await repo.findOne({ where: { id: invitation.id } }))!;
  }

  /** Frees the (workspace, email) pending slot held by an expired invitation before a new one. */
  async retireExpired(id: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('workspace_invitations')
        .set({ status: 'revoked', revoked_at: sql`now()`, updated_at: sql`now()` })
        .where('id', '=', id),
    );
  }
}
