import { Injectable } from '@nestjs/common';
import { sql, type ExpressionBuilder } from 'kysely';
import type { InvitationState } from './entities/workspace-invitation.entity.js';
import { WorkspaceInvitationEntity } from './entities/workspace-invitation.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { DB } from '#libs/database/schema.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { entityColumns, sameText } from '#libs/database/typed-fragments.js';

/** The derived state: pending past its expiry reads as expired. */
function stateOf(eb: ExpressionBuilder<DB, 'workspace_invitations'>) {
  return eb
    .case()
    .when(eb.and([eb('status', '=', sql.lit('pending')), eb('expires_at', '<=', sql<Date>`now()`)]))
    .then(sql.lit('expired'))
    .else(eb.ref('status'))
    .end();
}

@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repository(WorkspaceInvitationEntity);
  }

  async list(workspaceId: string, state?: InvitationState): Promise<WorkspaceInvitationEntity[]> {
    const rows = await this.db.typed((q) => {
      const query = q
        .selectFrom('workspace_invitations')
        .select(entityColumns(this.repo, 'workspace_invitations'))
        .where('workspace_id', '=', workspaceId);
      return (state ? query.where((eb) => eb(stateOf(eb), '=', state)) : query)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'asc');
    });
    return entitiesFrom(this.repo, rows);
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
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('workspace_invitations')
        .select(entityColumns(this.repo, 'workspace_invitations'))
        .where('workspace_id', '=', workspaceId)
        .where((eb) => sameText(eb, 'email', email))
        .where('status', '=', sql.lit('pending')),
    );
    return entitiesFrom(this.repo, rows)[0] ?? null;
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
