/**
 * Nova's instance states: vm_state and task_state combine into the API `status`
 * (nova.api.openstack.common._STATE_MAP), and actions check them as check_instance_state does.
 */
import { invalidState } from './errors.ts';

export const POWER = { NOSTATE: 0, RUNNING: 1, PAUSED: 3, SHUTDOWN: 4, CRASHED: 6, SUSPENDED: 7 } as const;

const STATE_MAP: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  active: {
    default: 'ACTIVE',
    rebooting: 'REBOOT',
    reboot_pending: 'REBOOT',
    reboot_started: 'REBOOT',
    rebooting_hard: 'HARD_REBOOT',
    reboot_pending_hard: 'HARD_REBOOT',
    reboot_started_hard: 'HARD_REBOOT',
    update_password: 'PASSWORD',
    rebuilding: 'REBUILD',
    rebuild_block_device_mapping: 'REBUILD',
    rebuild_spawning: 'REBUILD',
    migrating: 'MIGRATING',
    resize_prep: 'RESIZE',
    resize_migrating: 'RESIZE',
    resize_migrated: 'RESIZE',
    resize_finish: 'RESIZE',
  },
  building: { default: 'BUILD' },
  stopped: {
    default: 'SHUTOFF',
    resize_prep: 'RESIZE',
    resize_migrating: 'RESIZE',
    resize_migrated: 'RESIZE',
    resize_finish: 'RESIZE',
    rebuilding: 'REBUILD',
    rebuild_block_device_mapping: 'REBUILD',
    rebuild_spawning: 'REBUILD',
  },
  resized: { default: 'VERIFY_RESIZE', resize_reverting: 'REVERT_RESIZE' },
  paused: { default: 'PAUSED', migrating: 'MIGRATING' },
  suspended: { default: 'SUSPENDED' },
  rescued: { default: 'RESCUE' },
  error: {
    default: 'ERROR',
    rebuilding: 'REBUILD',
    rebuild_block_device_mapping: 'REBUILD',
    rebuild_spawning: 'REBUILD',
  },
  deleted: { default: 'DELETED' },
  soft_deleted: { default: 'SOFT_DELETED' },
  shelved: { default: 'SHELVED' },
  shelved_offloaded: { default: 'SHELVED_OFFLOADED' },
};

export function statusOf(vmState: string, taskState: string | null): string {
  const map = STATE_MAP[vmState];
  if (!map) return 'UNKNOWN';
  return (taskState !== null ? map[taskState] : undefined) ?? map['default'] ?? 'UNKNOWN';
}

/** For `?status=`: the vm_states and (when not every task state qualifies) task_states behind a status. */
export function statesForStatus(status: string): {
  vmStates: Set<string>;
  taskStates: Set<string | null> | undefined;
} {
  const vmStates = new Set<string>();
  const tasks = new Set<string>();
  for (const [vm, map] of Object.entries(STATE_MAP)) {
    for (const [task, shown] of Object.entries(map)) {
      if (shown.toLowerCase() !== status.toLowerCase()) continue;
      vmStates.add(vm);
      tasks.add(task);
    }
  }
  if (tasks.has('default')) return { vmStates, taskStates: undefined };
  return { vmStates, taskStates: new Set(tasks) };
}

export interface StateHolder {
  id: string;
  vm_state: string;
  task_state: string | null;
  launched_at: string | null;
}

/** check_instance_state: vm_state first, then task_state (None by default), then that it ever launched. */
export function checkState(
  s: StateHolder,
  action: string,
  rule: { vm?: readonly string[]; task?: readonly (string | null)[] | 'any'; mustHaveLaunched?: boolean },
): void {
  if (rule.vm && !rule.vm.includes(s.vm_state)) throw invalidState(action, s.id, 'vm_state', s.vm_state);
  const tasks = rule.task ?? [null];
  if (tasks !== 'any' && !tasks.includes(s.task_state))
    throw invalidState(action, s.id, 'task_state', s.task_state);
  if ((rule.mustHaveLaunched ?? true) && !s.launched_at)
    throw invalidState(action, s.id, 'launched_at', null);
}
