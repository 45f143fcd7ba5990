import { Foundation1763800000000 } from './1763800000000-foundation.js';
import { JobCancellation1763900000000 } from './1763900000000-job-cancellation.js';
import { SecretKeyId1764000000000 } from './1764000000000-secret-key-id.js';
import { Datasets1764100000000 } from './1764100000000-datasets.js';
import { EmbeddingConfigs1764200000000 } from './1764200000000-embedding-configs.js';
import { AuditClockTime1764300000000 } from './1764300000000-audit-clock-time.js';
import { NotificationConfigs1764400000000 } from './1764400000000-notification-configs.js';
import { SutsAndCatalogues1764500000000 } from './1764500000000-suts-and-catalogues.js';
import { Runs1764600000000 } from './1764600000000-runs.js';
import { Sdg1764700000000 } from './1764700000000-sdg.js';
import { Analysis1764800000000 } from './1764800000000-analysis.js';
import { Traces1764900000000 } from './1764900000000-traces.js';
import { Projects1765000000000 } from './1765000000000-projects.js';
import { Reports1765100000000 } from './1765100000000-reports.js';
import { ApiKeys1765200000000 } from './1765200000000-api-keys.js';
import { TraceLive1765300000000 } from './1765300000000-trace-live.js';
import { TraceLandingReservation1765400000000 } from './1765400000000-trace-landing-reservation.js';
import { TrackedJobs1765500000000 } from './1765500000000-tracked-jobs.js';
import { RunItemPages1765600000000 } from './1765600000000-run-item-pages.js';
import { JobOrder1765700000000 } from './1765700000000-job-order.js';
import { TrackedRuns1765900000000 } from './1765900000000-tracked-runs.js';
import { AccessChanges1766300000000 } from './1766300000000-access-changes.js';
import { RunItemCounts1766000000000 } from './1766000000000-run-item-counts.js';
import { DatasetPublishedRows1766100000000 } from './1766100000000-dataset-published-rows.js';
import { UserIdentities1766100001000 } from './1766100001000-user-identities.js';
import { EmbeddedRowIndexPendingList1766400000000 } from './1766400000000-embedded-row-index-pending-list.js';
import { LiveDropVersions1766450000000 } from './1766450000000-live-drop-versions.js';
import { RunGateVerdicts1766500000000 } from './1766500000000-run-gate-verdicts.js';
import { Review1766600000000 } from './1766600000000-review.js';
import { TraceFeedback1766700000000 } from './1766700000000-trace-feedback.js';
import { JudgeValidations1766800000000 } from './1766800000000-judge-validations.js';
import { ReviewJudgeRuns1766900000000 } from './1766900000000-review-judge-runs.js';
import { TraceScores1767000000000 } from './1767000000000-trace-scores.js';
import { OnlineEvaluation1767100000000 } from './1767100000000-online-evaluation.js';
import { OnlineAlerts1767200000000 } from './1767200000000-online-alerts.js';
import { TraceScoreOf1767300000000 } from './1767300000000-trace-score-of.js';
import { RunItemTrajectories1767400000000 } from './1767400000000-run-item-trajectories.js';
import { ConnectionTraceLinks1767410000000 } from './1767410000000-connection-trace-links.js';
import { TraceLogInbox1767480000000 } from './1767480000000-trace-log-inbox.js';
import { SpanTreeIndex1767650000000 } from './1767650000000-span-tree-index.js';
import { SsoIdentities1767660000000 } from './1767660000000-sso-identities.js';
import { AuditLog1767670000000 } from './1767670000000-audit-log.js';

/** Every migration, in order. Families append theirs; the same list runs on PostgreSQL and PGlite. */
export const migrations = [
  Foundation1763800000000,
  JobCancellation1763900000000,
  SecretKeyId1764000000000,
  Datasets1764100000000,
  EmbeddingConfigs1764200000000,
  AuditClockTime1764300000000,
  NotificationConfigs1764400000000,
  SutsAndCatalogues1764500000000,
  Runs1764600000000,
  Sdg1764700000000,
  Analysis1764800000000,
  Traces1764900000000,
  Projects1765000000000,
  Reports1765100000000,
  ApiKeys1765200000000,
  TraceLive1765300000000,
  TraceLandingReservation1765400000000,
  TrackedJobs1765500000000,
  RunItemPages1765600000000,
  JobOrder1765700000000,
  TrackedRuns1765900000000,
  RunItemCounts1766000000000,
  DatasetPublishedRows1766100000000,
  UserIdentities1766100001000,
  AccessChanges1766300000000,
  EmbeddedRowIndexPendingList1766400000000,
  LiveDropVersions1766450000000,
  RunGateVerdicts1766500000000,
  Review1766600000000,
  TraceFeedback1766700000000,
  JudgeValidations1766800000000,
  ReviewJudgeRuns1766900000000,
  TraceScores1767000000000,
  OnlineEvaluation1767100000000,
  OnlineAlerts1767200000000,
  TraceScoreOf1767300000000,
  RunItemTrajectories1767400000000,
  ConnectionTraceLinks1767410000000,
  TraceLogInbox1767480000000,
  SpanTreeIndex1767650000000,
  SsoIdentities1767660000000,
  AuditLog1767670000000,
];
