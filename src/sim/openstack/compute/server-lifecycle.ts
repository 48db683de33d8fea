/**
 * How a server moves between states over time: the build (scheduling → host → block_device_mapping →
 * spawning → ACTIVE, as the real cloud's task_state progression shows), power actions, delete, and
 * forced states. Every pending transition carries the server's generation, so a later operation
 * (delete, a forced state) cancels the ones in flight.
 */
import { isoSeconds } from '../core/ids.ts';
import type { TransitionKey } from '../core/timing.ts';
import type { Nova } from './context.ts';
import { DEFAULT_AZ, HOST, HOSTS } from './hosts.ts';
import { microIso } from './http.ts';
import { allocatePorts, releasePorts } from './server-networking.ts';
import type { ServerRecord } from './server-store.ts';
import {
  attachReadyVolumes,
  createVolumes,
  releaseVolumes,
  type BlockDeviceRequest,
} from './server-volumes.ts';
import { POWER, statusOf } from './states.ts';

const NO_VALID_HOST = 'No valid host was found. There are not enough hosts available.';
/** How long the build waits for Cinder to create boot volumes before giving up (in polls). */
const MAX_VOLUME_POLLS = 400;

export class Lifecycle {
  private readonly nova: Nova;
  private readonly generations = new Map<string, number>();
  /** Block device requests wait here until the build reaches its block_device_mapping step. */
  private readonly pendingBdms = new Map<string, BlockDeviceRequest[]>();

  constructor(nova: Nova) {
    this.nova = nova;
  }

  private touch(s: ServerRecord): void {
    s.updated_at = isoSeconds();
    this.nova.cloud.statuses.record('nova', 'server', s.id, statusOf(s.vm_state, s.task_state));
    this.nova.cloud.changed();
  }

  /** Starts a new operation on the server: transitions scheduled before it become no-ops. */
  private begin(s: ServerRecord): number {
    const g = (this.generations.get(s.id) ?? 0) + 1;
    this.generations.set(s.id, g);
    return g;
  }

  private later(s: ServerRecord, generation: number, ms: number, fn: () => void): void {
    this.nova.cloud.scheduler.schedule(ms, () => {
      if (this.generations.get(s.id) !== generation || this.nova.servers.byId.get(s.id) !== s) return;
      try {
        fn();
      } catch (err) {
        // A timer callback has no caller to answer; a throw here would take the process down.
        this.nova.cloud.log?.error({ err, server: s.id }, 'nova: server transition failed');
      }
    });
  }

  private delay(key: TransitionKey, share = 1): number {
    return Math.round(this.nova.cloud.timing.transition(key) * share);
  }

  build(s: ServerRecord, bdms: BlockDeviceRequest[]): void {
    const g = this.begin(s);
    this.nova.cloud.statuses.record('nova', 'server', s.id, statusOf(s.vm_state, s.task_state));
    if (bdms.length > 0) this.pendingBdms.set(s.id, bdms);
    if (s.stuck) return;
    this.later(s, g, this.delay('nova.server.build', 0.2), () => this.schedule(s, g));
  }

  private schedule(s: ServerRecord, g: number): void {
    if (this.nova.cloud.faults.isStuck('nova', 'server', s.id)) return;
    const host = this.pickHost(s);
    if (!host) {
      this.fail(s, { code: 500, message: NO_VALID_HOST }, false);
      return;
    }
    s.host = host;
    s.availability_zone ??= DEFAULT_AZ;
    s.task_state = null;
    this.touch(s);
    this.later(s, g, this.delay('nova.server.build', 0.1), () => this.blockDeviceMapping(s, g));
  }

  /** The scheduler's affinity filters, over the emulated hosts. */
  private pickHost(s: ServerRecord): string | undefined {
    const candidates = s.requested_host ? HOSTS.filter((h) => h === s.requested_host) : [...HOSTS];
    const group = s.server_group ? this.nova.groups.byId.get(s.server_group) : undefined;
    if (!group) return candidates[0];
    const peers = group.members
      .filter((id) => id !== s.id)
      .map((id) => this.nova.servers.byId.get(id)?.host)
      .filter((h): h is string => !!h);
    if (group.policy === 'affinity' && peers.length > 0) return candidates.find((h) => h === peers[0]);
    if (group.policy === 'anti-affinity') {
      const max = group.rules['max_server_per_host'] ?? 1;
      return candidates.find((h) => peers.filter((p) => p === h).length < max);
    }
    return candidates[0];
  }

  private blockDeviceMapping(s: ServerRecord, g: number): void {
    s.task_state = 'block_device_mapping';
    s.root_device_name = '/dev/vda';
    try {
      if (s.pending_networks) allocatePorts(this.nova.cloud.network, s, s.pending_networks);
      s.pending_networks = null;
    } catch (err) {
      this.nova.cloud.log?.info({ err, server: s.id }, 'nova: network allocation failed');
      this.fail(s, {
        code: 500,
        message: `Build of instance ${s.id} aborted: Failed to allocate the network(s), not rescheduling.`,
      });
      return;
    }
    const bdms = this.pendingBdms.get(s.id);
    this.pendingBdms.delete(s.id);
    try {
      if (bdms) createVolumes(this.nova.cloud.volume, s, bdms);
    } catch (err) {
      this.fail(s, { code: 500, message: `Build of instance ${s.id} aborted: ${errorText(err)}` });
      return;
    }
    this.touch(s);
    this.later(s, g, this.delay('nova.server.build', 0.1), () => this.waitForVolumes(s, g, 0));
  }

  private waitForVolumes(s: ServerRecord, g: number, polls: number): void {
    let state: 'ready' | 'waiting';
    try {
      state = attachReadyVolumes(this.nova.cloud.volume, s);
    } catch (err) {
      this.fail(s, { code: 500, message: `Build of instance ${s.id} aborted: ${errorText(err)}` });
      return;
    }
    if (state === 'waiting') {
      if (polls >= MAX_VOLUME_POLLS) {
        this.fail(s, {
          code: 500,
          message: `Build of instance ${s.id} aborted: volumes did not become available.`,
        });
        return;
      }
      const poll = Math.max(2, this.delay('cinder.volume.attach'));
      this.later(s, g, poll, () => this.waitForVolumes(s, g, polls + 1));
      return;
    }
    s.task_state = 'spawning';
    this.touch(s);
    this.later(s, g, this.delay('nova.server.build', 0.6), () => this.spawned(s));
  }

  private spawned(s: ServerRecord): void {
    if (s.doomed) {
      this.fail(s, {
        code: 500,
        message: `Build of instance ${s.id} aborted: Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${s.id}.`,
      });
      return;
    }
    s.vm_state = 'active';
    s.task_state = null;
    s.power_state = POWER.RUNNING;
    s.launched_at = microIso();
    this.touch(s);
  }

  /** A failed build: ERROR with a fault; networks and delete_on_termination volumes are cleaned up. */
  private fail(s: ServerRecord, fault: { code: number; message: string }, onHost = true): void {
    s.vm_state = 'error';
    s.task_state = null;
    s.power_state = POWER.NOSTATE;
    s.fault = { ...fault, created: isoSeconds() };
    this.pendingBdms.delete(s.id);
    if (onHost) {
      releasePorts(this.nova.cloud.network, s.ports, s.id, this.nova.cloud.log);
      s.ports = [];
      const doomed = s.volumes.filter((v) => v.delete_on_termination);
      releaseVolumes(this.nova.cloud, doomed, s.id);
      s.volumes = s.volumes.filter((v) => !v.delete_on_termination);
    }
    s.pending_networks = null;
    this.touch(s);
  }

  /** DELETE: a server never scheduled goes at once; others show task_state deleting until the host is done. */
  delete(s: ServerRecord): void {
    if (s.task_state === 'deleting') return;
    const g = this.begin(s);
    if (!s.host) {
      this.finishDelete(s);
      return;
    }
    s.task_state = 'deleting';
    this.touch(s);
    this.later(s, g, this.delay('nova.server.delete'), () => this.finishDelete(s));
  }

  private finishDelete(s: ServerRecord): void {
    const cloud = this.nova.cloud;
    try {
      releasePorts(cloud.network, s.ports, s.id, cloud.log);
      releaseVolumes(cloud, s.volumes, s.id);
    } finally {
      this.pendingBdms.delete(s.id);
      this.generations.delete(s.id);
      this.nova.groups.removeMember(s.id);
      this.nova.servers.remove(s.id);
      cloud.changed();
    }
  }

  /** A power action: the task state shows at once, the resulting state after the action's delay. */
  transition(
    s: ServerRecord,
    task: string,
    key: TransitionKey,
    result: { vm_state: string; power_state: number },
  ): void {
    const g = this.begin(s);
    s.task_state = task;
    this.touch(s);
    this.later(s, g, this.delay(key), () => {
      s.vm_state = result.vm_state;
      s.power_state = result.power_state;
      s.task_state = null;
      this.touch(s);
    });
  }

  /**
   * The admin API's forced state (POST /_sim/state/nova/server/{id}); cancels transitions in flight.
   * False (nothing changed) for a status it cannot map.
   */
  force(s: ServerRecord, fields: Record<string, unknown>): boolean {
    const status = typeof fields['status'] === 'string' ? fields['status'].toUpperCase() : undefined;
    const byStatus: Record<string, [string, number]> = {
      ACTIVE: ['active', POWER.RUNNING],
      SHUTOFF: ['stopped', POWER.SHUTDOWN],
      ERROR: ['error', s.power_state],
      PAUSED: ['paused', POWER.PAUSED],
      SUSPENDED: ['suspended', POWER.SHUTDOWN],
      BUILD: ['building', POWER.NOSTATE],
    };
    const mapped = status === undefined ? undefined : byStatus[status];
    if (status !== undefined && !mapped) return false;
    this.begin(s);
    if (mapped) {
      [s.vm_state, s.power_state] = mapped;
      s.task_state = null;
    }
    if (typeof fields['vm_state'] === 'string') s.vm_state = fields['vm_state'];
    if (fields['task_state'] === null || typeof fields['task_state'] === 'string')
      s.task_state = fields['task_state'];
    if (typeof fields['power_state'] === 'number') s.power_state = fields['power_state'];
    if (s.vm_state === 'error') {
      const message =
        typeof fields['fault'] === 'string'
          ? fields['fault']
          : 'Forced to ERROR through the emulator admin API.';
      s.fault = { code: 500, message, created: isoSeconds() };
    }
    if (s.vm_state !== 'building' && s.vm_state !== 'error' && !s.host) {
      // A server forced out of BUILD lands on the host, with its networks.
      s.host = HOST;
      s.availability_zone ??= DEFAULT_AZ;
      s.root_device_name = '/dev/vda';
      try {
        if (s.pending_networks) allocatePorts(this.nova.cloud.network, s, s.pending_networks);
      } finally {
        s.pending_networks = null;
      }
    }
    if ((s.vm_state === 'active' || s.vm_state === 'stopped') && !s.launched_at) s.launched_at = microIso();
    this.touch(s);
    return true;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
