import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  validateSync,
} from 'class-validator';
import { availableParallelism } from 'node:os';
import { emailDomainsProblem, originsProblem, parseGroupRoles } from './sso-settings.js';
import { trustedProxiesProblem } from './trusted-proxies.js';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
const toBool = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  return value;
};

function groupRolesProblem(text: string): string | undefined {
  try {
    parseGroupRoles(text);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Valid when `problem` finds nothing wrong with the string; its finding is the message. */
function WithoutProblem(name: string, problem: (value: string) => string | undefined): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (v) => typeof v === 'string' && problem(v) === undefined,
      defaultMessage: (a) => `${a?.property}: ${problem(String(a?.value)) ?? 'is invalid'}`,
    },
  });
}

/**
 * Hashes at once by default: one per core, at least 2, and at most half of libuv's thread pool
 * (argon2 runs there), so file and DNS work keeps threads of its own.
 */
export function defaultHashConcurrency(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.max(2, Math.min(availableParallelism(), Math.floor(pool / 2)));
}

/**
 * Every environment variable the service reads. Validated at boot: a bad value stops the
 * process with a message naming each offending variable. docs/configuration.md is the reference.
 */
export class Environment {
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number = 3000;

  @IsOptional()
  @IsString()
  HOST: string = '0.0.0.0';

  @IsOptional()
  @IsString()
  @MinLength(1)
  DATA_DIR: string = './data';

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/.+/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsOptional()
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  DATABASE_POOL_SIZE: number = 10;

  /**
   * The embedded database's buffer cache (PostgreSQL's `shared_buffers`), whole megabytes or
   * gigabytes; unset, 32MB (openDatabase's default). PGlite touches all of it when it opens, so it
   * is resident memory from the start.
   */
  @IsOptional()
  @Matches(/^[1-9][0-9]{0,5}(MB|GB)$/, {
    message: 'EMBEDDED_SHARED_BUFFERS must be a size in whole MB or GB, such as 32MB',
  })
  EMBEDDED_SHARED_BUFFERS?: string;

  @IsOptional()
  @IsEmail()
  ADMIN_EMAIL: string = 'admin@example.com';

  @IsOptional()
  @IsString()
  @MinLength(8, { message: 'ADMIN_PASSWORD must be at least 8 characters' })
  ADMIN_PASSWORD?: string;

  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' })
  JWT_SECRET?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'ENCRYPTION_KEY must be 32 bytes, base64 encoded (44 characters)' })
  ENCRYPTION_KEY?: string;

  /** Earlier ENCRYPTION_KEYs, comma-separated: they still open secrets sealed with them until `npm run rotate-keys` re-seals those. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9+/]{43}=(,[A-Za-z0-9+/]{43}=)*$/, {
    message: 'ENCRYPTION_KEY_PREVIOUS must be a comma-separated list of 32-byte base64 keys',
  })
  ENCRYPTION_KEY_PREVIOUS?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(60)
  @Max(7 * 24 * 3600)
  TOKEN_TTL_SECONDS: number = 3600;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  LOGIN_MAX_FAILURES: number = 5;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(24 * 3600)
  LOGIN_LOCKOUT_SECONDS: number = 900;

  /**
   * Days the audit log keeps an event (a workspace's own setting wins for its events); unset keeps
   * them until a workspace sets one. The hourly sweep deletes older events.
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(36500)
  AUDIT_RETENTION_DAYS?: number;

  /**
   * Rate limits per caller (an API key, a user, or the client address where no one is signed in),
   * by route class; false leaves limiting to a gateway in front (docs/security.md).
   */
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  RATE_LIMITS: boolean = true;

  /** The window every class's limit is counted in (fixed, from a caller's first request in it). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3600)
  RATE_LIMIT_WINDOW_SECONDS: number = 60;

  /** GET and HEAD requests a caller may send in a window. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  RATE_LIMIT_READ: number = 1200;

  /** POST, PUT, PATCH and DELETE requests a caller may send in a window (ingestion and login apart). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  RATE_LIMIT_WRITE: number = 300;

  /** Trace ingestion, OTLP exports, trace feedback and dataset and run uploads a caller may send in a window. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  RATE_LIMIT_INGESTION: number = 600;

  /** Credential requests (POST /auth/token, /auth/accept-invitation, /internal/auth/verify) one address may send in a window. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  RATE_LIMIT_LOGIN: number = 30;

  /**
   * The cost of a new password hash (argon2id): memory in KiB, passes, lanes. The defaults are
   * argon2's own (64 MiB, 3, 4), above OWASP's minimum (19 MiB, 2, 1). A stored hash carries the
   * parameters it was made with, so changing them never locks anyone out.
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(4 * 1024 * 1024)
  PASSWORD_HASH_MEMORY_KIB: number = 65536;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(32)
  PASSWORD_HASH_TIME_COST: number = 3;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(16)
  PASSWORD_HASH_PARALLELISM: number = 4;

  /** Password hashes and verifies (argon2id, 64 MiB each) computed at once in this process. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(64)
  PASSWORD_HASH_CONCURRENCY: number = defaultHashConcurrency();

  /** Anonymous callers (logins) that may wait for a hashing slot; beyond them, 429 auth_busy at once. Default: twice the concurrency. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(1000)
  PASSWORD_HASH_QUEUE?: number;

  /** Proxies whose X-Forwarded-For (and -Proto, -Host) are believed: IPs, CIDR ranges, or loopback, linklocal, uniquelocal. Unset: none. */
  @IsOptional()
  @ValidateBy({
    name: 'trustedProxies',
    validator: {
      validate: (v) => typeof v === 'string' && !trustedProxiesProblem(v),
      defaultMessage: (a) => trustedProxiesProblem(String(a?.value)) ?? 'TRUSTED_PROXIES is invalid',
    },
  })
  TRUSTED_PROXIES?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(24 * 90)
  INVITATION_TTL_HOURS: number = 168;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(24 * 60)
  RESET_TOKEN_TTL_MINUTES: number = 60;

  /** The OpenID Connect issuer users sign in with (its discovery document is read from `<issuer>/.well-known/openid-configuration`); unset: no single sign-on. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2000)
  SSO_ISSUER_URL?: string;

  /** The client id registered at the issuer; required with SSO_ISSUER_URL. */
  @ValidateIf((env: Environment) => !!env.SSO_ISSUER_URL || env.SSO_CLIENT_ID !== undefined)
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  SSO_CLIENT_ID?: string;

  /** The client secret (a confidential client, `client_secret_basic`); unset: a public client, PKCE only. Never echoed or logged. */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  SSO_CLIENT_SECRET?: string;

  /** The redirect URI registered at the issuer; default `<PUBLIC_BASE_URL or the request's origin>/auth/sso/callback`. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2000)
  SSO_REDIRECT_URL?: string;

  /** Scopes asked for, space-separated; must include `openid`. */
  @IsOptional()
  @Matches(/^(?=(.* )?openid( |$))[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, {
    message: 'SSO_SCOPES must be space-separated scopes including openid',
  })
  @MaxLength(1000)
  SSO_SCOPES: string = 'openid email profile';

  /** The claim (ID token or userinfo) holding the user's groups: an array of strings, or one string. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_:./-]{1,200}$/, { message: 'SSO_GROUPS_CLAIM must be a claim name' })
  SSO_GROUPS_CLAIM: string = 'groups';

  /** JSON: each group and the workspace role it grants, `{"<group>": {"workspace": "<workspace id>", "role": "admin|member|viewer"}}` (or a list per group); applied at every SSO login. */
  @IsOptional()
  @WithoutProblem('groupRoles', groupRolesProblem)
  SSO_GROUP_ROLES?: string;

  /** Comma-separated groups whose members are system admins; when set, an SSO user in none of them is a plain user. */
  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  SSO_ADMIN_GROUPS?: string;

  /** Comma-separated e-mail domains whose users must sign in through SSO: POST /auth/token refuses their passwords. */
  @IsOptional()
  @WithoutProblem('emailDomains', emailDomainsProblem)
  SSO_REQUIRED_DOMAINS?: string;

  /** Comma-separated origins a login may return to (`return_to`), the token in the URL's fragment; unset: the callback answers the token as JSON only. */
  @IsOptional()
  @WithoutProblem('origins', originsProblem)
  SSO_RETURN_ORIGINS?: string;

  /** Where the issuer sends the browser after RP-initiated logout (registered at the issuer); unset: the issuer's own page. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2000)
  SSO_POST_LOGOUT_REDIRECT_URL?: string;

  /** Tie an existing account to an SSO identity of the same e-mail at its first SSO login; unset, that login is refused (409 sso_account_exists). */
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  SSO_LINK_EXISTING_ACCOUNTS: boolean = false;

  /** Allow an issuer on plain http (a development identity provider on loopback); never in production. */
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  SSO_ALLOW_HTTP_ISSUER: boolean = false;

  /** Server-Sent Events streams of run events (GET /runs/{id}/events/stream) open at once in this process; beyond it, 503 event_streams_exhausted. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  RUN_EVENT_STREAMS_MAX: number = 200;

  /** Of those, how many one user (with any of their tokens and API keys) may hold; beyond it, 429 too_many_event_streams. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  RUN_EVENT_STREAMS_PER_USER: number = 20;

  /** Seconds between the heartbeat comments of an idle run event stream (and its re-read of the events, in case a signal was lost). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(300)
  RUN_EVENT_STREAM_HEARTBEAT_SECONDS: number = 15;

  /** On SIGTERM/SIGINT, how long requests in flight may finish before their connections are closed (docs/operations.md, Shutdown). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600)
  SHUTDOWN_GRACE_SECONDS: number = 10;

  @IsOptional()
  @IsString()
  @Matches(/^\d+(b|kb|mb)$/i, { message: 'BODY_LIMIT must look like 1mb, 512kb or 1048576b' })
  BODY_LIMIT: string = '1mb';

  /** Largest file POST /datasets/upload accepts, in bytes (default 1 GiB); larger is 413. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(64 * 1024 ** 3)
  UPLOAD_MAX_BYTES: number = 1024 ** 3;

  /** Largest OTLP/HTTP export body POST /v1/traces accepts once decompressed, in bytes (default 16 MiB); larger is 413. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(64 * 1024)
  @Max(1024 ** 3)
  OTLP_MAX_BYTES: number = 16 * 1024 ** 2;

  /** Port of the OTLP/gRPC trace receiver (TraceService/Export; OTLP's port is 4317), on HOST beside the HTTP port; unset: no gRPC receiver. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(65535)
  OTLP_GRPC_PORT?: number;

  /** Spans acknowledged by POST /v1/traces and not yet landed, per dataset, beyond which exporters are told to retry later (429 with Retry-After). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(100_000_000)
  OTLP_MAX_PENDING_SPANS: number = 200_000;

  /** Seconds a log record of POST /v1/logs waits for its span to land before it is dropped (`span_not_received`; default 3600). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(7 * 24 * 3600)
  OTLP_LOG_PENDING_SECONDS: number = 3600;

  /** Most rows one upload may hold (default 1,000,000); more is 413. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  UPLOAD_MAX_ROWS: number = 1_000_000;

  /**
   * Uploads of at least this many bytes are read and encoded on a worker thread, overlapping the
   * database's COPY (default 1 MiB; 0 sends every upload there).
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  UPLOAD_THREAD_MIN_BYTES: number = 1024 * 1024;

  /** Lifetime of signed download URLs when the caller does not ask for one, in seconds. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(7 * 24 * 3600)
  SIGNED_URL_TTL_SECONDS: number = 3600;

  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  RUN_WORKERS: boolean = true;

  /** Refuse outbound calls (SUTs, judges, embeddings, custom ops, webhooks, trace sources) to loopback and private addresses too; link-local and cloud metadata addresses are always refused */
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  OUTBOUND_BLOCK_PRIVATE: boolean = false;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(64)
  QUEUE_CONCURRENCY: number = 2;

  /** The CPU priority (nice value, 0–19) a worker process of its own (`npm run start:worker`) takes at start: API processes on the same host are served first */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(19)
  WORKER_NICE: number = 10;

  /** A worker process of its own answers GET /live and /ready on this port of HOST (its health probes); 0: no listener */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  WORKER_HEALTH_PORT: number = 0;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(5)
  @Max(3600)
  JOB_LEASE_SECONDS: number = 30;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  JOB_MAX_ATTEMPTS: number = 3;

  /** First retry delay of a failed job; each further attempt doubles it (capped at 10 minutes). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600_000)
  JOB_RETRY_DELAY_MS: number = 5000;

  /** How long a worker holds the online targets it claimed before another may take them (its worker died). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(5)
  @Max(3600)
  ONLINE_LEASE_SECONDS: number = 120;

  /** How long targets of an online evaluator wait before a judge that could not be reached is tried again. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  ONLINE_JUDGE_RETRY_MS: number = 30_000;

  /** How often an idle in-process worker looks for due jobs (enqueues in the same process wake it at once). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(50)
  @Max(60_000)
  QUEUE_POLL_INTERVAL_MS: number = 1000;

  /** Items of a run its worker reads at a time (conversations whole); the summary at the end reads four times as many lighter rows at a time. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(100_000)
  RUN_PAGE_SIZE: number = 500;

  /** On shutdown, how long running jobs may finish before their leases are released for another worker. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600)
  QUEUE_SHUTDOWN_GRACE_SECONDS: number = 10;

  /** Redis key prefix of the BullMQ queue; processes sharing a prefix (and Redis) share the queue. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'QUEUE_PREFIX must be 1-64 of A-Z a-z 0-9 _ -' })
  QUEUE_PREFIX: string = 'ews';

  @IsOptional()
  @IsIn(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
  LOG_LEVEL: string = 'info';

  /** The address clients reach the service at (e.g. https://evals.example.com), used in invitation links and signed URLs; default: the request's own host. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  PUBLIC_BASE_URL?: string;
}

export class ConfigurationError extends Error {}

/** Parses and validates the environment; throws one error naming every bad variable. */
export function loadEnvironment(source: NodeJS.ProcessEnv = process.env): Environment {
  const known = Object.keys(new Environment());
  const raw: Record<string, string> = {};
  for (const key of [
    ...known,
    'DATABASE_URL',
    'REDIS_URL',
    'ADMIN_PASSWORD',
    'JWT_SECRET',
    'ENCRYPTION_KEY',
    'ENCRYPTION_KEY_PREVIOUS',
    'PUBLIC_BASE_URL',
    'PASSWORD_HASH_QUEUE',
    'TRUSTED_PROXIES',
    'OTLP_GRPC_PORT',
    'SSO_ISSUER_URL',
    'SSO_CLIENT_ID',
    'SSO_CLIENT_SECRET',
    'SSO_REDIRECT_URL',
    'SSO_GROUP_ROLES',
    'SSO_ADMIN_GROUPS',
    'SSO_REQUIRED_DOMAINS',
    'SSO_RETURN_ORIGINS',
    'SSO_POST_LOGOUT_REDIRECT_URL',
  ]) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const env = plainToInstance(Environment, raw, { exposeDefaultValues: true });
  const errors = validateSync(env, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `  ${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigurationError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return env;
}
