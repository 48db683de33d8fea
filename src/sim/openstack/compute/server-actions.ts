/**
 * POST /servers/{id}/action: the power actions with their task states and delays, lock, reset
 * state and console output. Actions the emulator does not model answer 501; unknown ones 400.
 */
import { SimError } from '../core/errors.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import type { Nova } from './context.ts';
import { policyForbidden } from './errors.ts';
import { asRecord, auth, empty, json, projectOf, requireAdmin } from './http.ts';
import type { Lifecycle } from './server-lifecycle.ts';
import { checkLock, findServer } from './server-routes.ts';
import type { ServerRecord } from './server-store.ts';
import { checkState, POWER } from './states.ts';
import * as t from './schema.ts';

/** Real actions this emulator does not model: an honest 501 rather than a fake success. */
const NOT_EMULATED = new Set([
  'createImage',
  'createBackup',
  'resize',
  'confirmResize',
  'revertResize',
  'rebuild',
  'migrate',
  'os-migrateLive',
  'evacuate',
  'shelve',
  'shelveOffload',
  'unshelve',
  'rescue',
  'unrescue',
  'addSecurityGroup',
  'removeSecurityGroup',
  'forceDelete',
  'restore',
  'trigger_crash_dump',
  'os-getVNCConsole',
  'os-getSPICEConsole',
  'os-getSerialConsole',
  'os-getRDPConsole',
  'injectNetworkInfo',
  'resetNetwork',
  'addFixedIp',
  'removeFixedIp',
  'addFloatingIp',
  'removeFloatingIp',
]);

const REBOOT_TASKS = [
  null,
  'rebooting',
  'reboot_pending',
  'reboot_started',
  'rebooting_hard',
  'resuming',
  'unpausing',
  'pausing',
  'suspending',
];

export function actionRoutes(nova: Nova, lifecycle: Lifecycle): Route[] {
  const { mv } = nova;

  const power = (
    req: SimRequest,
    s: ServerRecord,
    action: string,
    from: readonly string[],
    task: string,
    key: Parameters<Lifecycle['transition']>[2],
    to: { vm_state: string; power_state: number },
  ): SimResponse => {
    checkLock(req, s);
    checkState(s, action, { vm: from });
    lifecycle.transition(s, task, key, to);
    return empty(202);
  };

  const reboot = (req: SimRequest, s: ServerRecord, arg: unknown): SimResponse => {
    t.validateBody(
      {
        type: 'object',
        properties: {
          reboot: {
            type: 'object',
            properties: { type: { type: 'string', enum: ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'] } },
            required: ['type'],
            additionalProperties: false,
          },
        },
        required: ['reboot'],
        additionalProperties: false,
      },
      { reboot: arg },
    );
    const hard = String(asRecord(arg)['type']).toUpperCase() === 'HARD';
    checkLock(req, s);
    checkState(s, 'reboot', {
      vm: ['active', 'stopped', 'paused', 'suspended', 'error'],
      task: REBOOT_TASKS,
    });
    if (!hard) checkState(s, 'reboot', { vm: ['active'], task: [null] });
    lifecycle.transition(s, hard ? 'rebooting_hard' : 'rebooting', 'nova.server.reboot', {
      vm_state: 'active',
      power_state: POWER.RUNNING,
    });
    return empty(202);
  };

  const lock = (req: SimRequest, s: ServerRecord, arg: unknown): SimResponse => {
    const reason = mv.atLeast(req, '2.73') ? asRecord(arg)['locked_reason'] : undefined;
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 255)) {
      throw new SimError(
        400,
        `Invalid input for field/attribute locked_reason. Value: ${t.pyRepr(reason)}. ${t.pyRepr(reason)} is not of type 'string'`,
      );
    }
    s.locked_by = s.project_id === projectOf(req) ? 'owner' : 'admin';
    s.locked_reason = typeof reason === 'string' ? reason : null;
    nova.cloud.changed();
    return empty(202);
  };

  const unlock = (req: SimRequest, s: ServerRecord): SimResponse => {
    if (s.locked_by === 'admin' && !auth(req).isAdmin) {
      throw policyForbidden('os_compute_api:os-lock-server:unlock:unlock_override');
    }
    s.locked_by = null;
    s.locked_reason = null;
    nova.cloud.changed();
    return empty(202);
  };

  const resetState = (req: SimRequest, s: ServerRecord, arg: unknown): SimResponse => {
    requireAdmin(req, 'os_compute_api:os-admin-actions:reset_state');
    t.validateBody(
      {
        type: 'object',
        properties: { state: { type: 'string', enum: ['active', 'error'] } },
        required: ['state'],
        additionalProperties: false,
      },
      arg,
    );
    lifecycle.force(s, { vm_state: asRecord(arg)['state'], task_state: null });
    return empty(202);
  };

  const consoleOutput = (s: ServerRecord, arg: unknown): SimResponse => {
    if (s.vm_state !== 'active') throw new SimError(409, `Instance ${s.id} is not ready`);
    const lines = [
      `[    0.000000] Linux version 6.1.0 (emulated) #1 SMP`,
      `[    1.200000] cloud-init: instance ${s.id} (${s.hostname}) booting`,
      `[    3.400000] cloud-init: finished`,
      `${s.hostname} login: `,
    ];
    const len = asRecord(arg)['length'];
    const n = len === undefined || len === null ? lines.length : Number(len);
    if (!Number.isInteger(n) || n < -1) throw new SimError(400, 'Invalid input for field/attribute length.');
    return json(200, { output: (n === -1 ? lines : lines.slice(-n)).join('\n') });
  };

  const handle = (req: SimRequest): SimResponse => {
    const s = findServer(nova, req);
    const body = asRecord(req.body);
    const names = Object.keys(body);
    const name = names[0];
    if (name === undefined) throw new SimError(400, 'Malformed request body');
    const arg = body[name];
    switch (name) {
      case 'os-stop':
        return power(req, s, 'stop', ['active', 'error'], 'powering-off', 'nova.server.stop', {
          vm_state: 'stopped',
          power_state: POWER.SHUTDOWN,
        });
      case 'os-start':
        return power(req, s, 'start', ['stopped'], 'powering-on', 'nova.server.start', {
          vm_state: 'active',
          power_state: POWER.RUNNING,
        });
      case 'reboot':
        return reboot(req, s, arg);
      case 'pause':
        return power(req, s, 'pause', ['active'], 'pausing', 'nova.server.stop', {
          vm_state: 'paused',
          power_state: POWER.PAUSED,
        });
      case 'unpause':
        return power(req, s, 'unpause', ['paused'], 'unpausing', 'nova.server.start', {
          vm_state: 'active',
          power_state: POWER.RUNNING,
        });
      case 'suspend':
        return power(req, s, 'suspend', ['active'], 'suspending', 'nova.server.stop', {
          vm_state: 'suspended',
          power_state: POWER.SHUTDOWN,
        });
      case 'resume':
        return power(req, s, 'resume', ['suspended'], 'resuming', 'nova.server.start', {
          vm_state: 'active',
          power_state: POWER.RUNNING,
        });
      case 'lock':
        return lock(req, s, arg);
      case 'unlock':
        return unlock(req, s);
      case 'os-resetState':
        return resetState(req, s, arg);
      case 'os-getConsoleOutput':
        return consoleOutput(s, arg);
      case 'changePassword': {
        t.validateBody(
          {
            type: 'object',
            properties: { adminPass: { type: 'string' } },
            required: ['adminPass'],
            additionalProperties: false,
          },
          arg,
        );
        checkLock(req, s);
        checkState(s, 'changePassword', { vm: ['active'] });
        return empty(202);
      }
    }
    if (NOT_EMULATED.has(name)) {
      throw new SimError(501, `The emulator does not implement the '${name}' server action.`);
    }
    throw new SimError(400, `There is no such action: ${name}`);
  };

  return [{ method: 'POST', template: '/v2.1/servers/{server_id}/action', handler: handle }];
}
