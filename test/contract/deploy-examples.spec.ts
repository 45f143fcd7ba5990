import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { Environment } from '#libs/config/environment.js';
import { shutdownBounds } from '#src/shutdown.js';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The longest a process may take to stop with the default graces: the API's deadline (it also drains requests). */
const deadlineSeconds = shutdownBounds(new Environment(), true).deadlineMs / 1000;

/** "30s", "1m30s" (Compose durations) in seconds. */
function seconds(duration: string): number {
  const m = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  if (!m || (!m[1] && !m[2])) throw new Error(`not a duration: ${duration}`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0);
}

/**
 * The deployment examples (deploy/, docs/operations.md#docker) give every process of the image
 * more time to stop than the service's own hard deadline, run the worker with its own entry point
 * and probe, and run as the numeric non-root user the image declares.
 */
describe('deployment examples', () => {
  it('the documented stop timeout (30 s) exceeds the shutdown deadline, as the docs and the Dockerfile say', () => {
    expect(deadlineSeconds).toBe(25);
    expect(read('docs/operations.md')).toContain(`**Hard deadline** (exit 1) | **${deadlineSeconds} s**`);
    expect(read('Dockerfile')).toMatch(/docker stop -t 30/);
  });

  it('Compose: every service of the image has a stop_grace_period over the deadline; the worker runs its own entry point', () => {
    const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
      services: Record<
        string,
        { image?: string; stop_grace_period?: string; command?: string[]; environment?: Record<string, string> }
      >;
    };
    const ews = Object.entries(compose.services).filter(([, service]) => service.image === 'ews');
    expect(ews.map(([name]) => name).sort()).toEqual(['api', 'worker']);
    for (const [, service] of ews) expect(seconds(service.stop_grace_period!)).toBeGreaterThan(deadlineSeconds);
    expect(compose.services.worker.command).toEqual(['node', 'dist/src/worker.js']);
    expect(compose.services.api.environment).toMatchObject({ RUN_WORKERS: 'false' });
    expect(compose.services.worker.environment).not.toHaveProperty('ADMIN_PASSWORD');
  });

  it('Kubernetes: both Deployments stop within a grace over the deadline, as a verifiable non-root user, probing their own port', () => {
    const docs = parseAllDocuments(read('deploy/kubernetes/ews.yaml')).map((doc) => doc.toJS());
    const deployments = docs.filter((doc) => doc.kind === 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['ews-api', 'ews-worker']);
    const dockerUser = /^USER (\d+)(?::(\d+))?$/m.exec(read('Dockerfile'))!;
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(deadlineSeconds);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: Number(dockerUser[1]) });
      const [container] = pod.containers;
      expect(container.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      const port = container.ports[0];
      expect(container.livenessProbe.httpGet).toEqual({ path: '/live', port: port.name });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/ready', port: port.name });
    }
    const worker = deployments.find((d) => d.metadata.name === 'ews-worker').spec.template.spec.containers[0];
    expect(worker.command).toEqual(['node', 'dist/src/worker.js']);
    expect(worker.ports[0].containerPort).toBe(Number(/WORKER_HEALTH_PORT=(\d+)/.exec(read('Dockerfile'))![1]));
  });
});
