import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { JOB_HANDLER, JOB_SETTLED, type JobHandlerMetadata } from './job-handler.decorator.js';
import type { Job, JobHandlerFunction } from './job.types.js';
import type { TrackedRecord } from './tracked-job.js';
import { TrackedRecords } from './tracked-records.service.js';

export interface RegisteredHandler {
  type: string;
  maxAttempts?: number;
  /** The record its jobs settle. */
  tracks?: TrackedRecord;
  /** `Provider.method`, for logs. */
  name: string;
  run: JobHandlerFunction;
}

export type SettledListener = (job: Job) => Promise<void>;

/**
 * Finds the `@JobHandler` and `@OnJobSettled` methods of every provider at boot, so a family
 * only decorates a method of one of its services (Immich's style).
 */
@Injectable()
export class JobHandlerRegistry implements OnModuleInit {
  private readonly logger = new Logger('Queue');
  private readonly handlers = new Map<string, RegisteredHandler>();
  private readonly settled = new Map<string, SettledListener[]>();
  private discovered = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly tracked: TrackedRecords,
  ) {}

  onModuleInit(): void {
    this.discover();
  }

  private discover(): void {
    if (this.discovered) return;
    this.discovered = true;
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance);
      if (!prototype || prototype === Object.prototype) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[methodName];
        const handler = this.reflector.get<JobHandlerMetadata | undefined>(JOB_HANDLER, method);
        const settledTypes = this.reflector.get<string[] | undefined>(JOB_SETTLED, method) ?? [];
        if (!handler && !settledTypes.length) continue;
        const name = `${prototype.constructor.name}.${methodName}`;
        if (!wrapper.isDependencyTreeStatic()) {
          throw new Error(
            `${name}: job handlers must live on singleton providers (not request-scoped or transient ones)`,
          );
        }
        const bound = (method as (...args: unknown[]) => unknown).bind(instance);
        if (handler) {
          const existing = this.handlers.get(handler.type);
          if (existing) throw new Error(`job type ${handler.type} has two handlers: ${existing.name} and ${name}`);
          this.handlers.set(handler.type, {
            type: handler.type,
            maxAttempts: handler.maxAttempts,
            tracks: handler.tracks,
            name,
            run: bound as JobHandlerFunction,
          });
        }
        for (const type of settledTypes) {
          const list = this.settled.get(type) ?? [];
          list.push(bound as SettledListener);
          this.settled.set(type, list);
        }
      }
    }
    if (this.handlers.size) this.logger.log(`job handlers: ${[...this.handlers.keys()].sort().join(', ')}`);
  }

  handler(type: string): RegisteredHandler | undefined {
    this.discover();
    return this.handlers.get(type);
  }

  /** The record jobs of this type settle, if any. */
  tracking(type: string): TrackedRecord | undefined {
    return this.handler(type)?.tracks;
  }

  /** What runs when a job of this type ends: the tracked record's mirror first, then the `@OnJobSettled` listeners. */
  settledListeners(type: string): SettledListener[] {
    this.discover();
    const record = this.tracking(type);
    const listeners = this.settled.get(type) ?? [];
    return record ? [(job) => this.tracked.settle(record, job), ...listeners] : listeners;
  }

  types(): string[] {
    this.discover();
    return [...this.handlers.keys()].sort();
  }
}
