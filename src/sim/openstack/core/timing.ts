/**
 * How long emulated work takes. Two kinds of delay:
 * - transitions: how long an object stays in BUILD / PENDING_* / creating before it settles;
 * - latency: how long an API call takes to answer, per operation (`<service> <METHOD> <template>`).
 * Every figure is multiplied by `timeScale`, so the demo can run the realistic profile in a minute.
 */

export type TransitionKey =
  | 'nova.server.build'
  | 'nova.server.delete'
  | 'nova.server.stop'
  | 'nova.server.start'
  | 'nova.server.reboot'
  | 'octavia.loadbalancer.create'
  | 'octavia.loadbalancer.update'
  | 'octavia.loadbalancer.delete'
  | 'octavia.loadbalancer.failover'
  | 'octavia.child.create'
  | 'octavia.child.update'
  | 'octavia.child.delete'
  | 'octavia.member.batch'
  | 'cinder.volume.create'
  | 'cinder.volume.delete'
  | 'cinder.volume.attach'
  | 'neutron.port.bind';

export interface Profile {
  name: string;
  timeScale: number;
  transitions: Record<TransitionKey, number>;
  /** Answer latency per operation key (`neutron POST /v2.0/ports`), or per service (`neutron`), or `*`. */
  latency: Record<string, number>;
}

const FAST_TRANSITIONS: Record<TransitionKey, number> = {
  'nova.server.build': 20,
  'nova.server.delete': 10,
  'nova.server.stop': 10,
  'nova.server.start': 10,
  'nova.server.reboot': 10,
  'octavia.loadbalancer.create': 20,
  'octavia.loadbalancer.update': 10,
  'octavia.loadbalancer.delete': 10,
  'octavia.loadbalancer.failover': 20,
  'octavia.child.create': 10,
  'octavia.child.update': 10,
  'octavia.child.delete': 10,
  'octavia.member.batch': 10,
  'cinder.volume.create': 10,
  'cinder.volume.delete': 10,
  'cinder.volume.attach': 5,
  'neutron.port.bind': 5,
};

/** Figures from a production amphora cloud and ../shared/openstack-real NOTES.md measurements. */
const REALISTIC_TRANSITIONS: Record<TransitionKey, number> = {
  'nova.server.build': 10_000,
  'nova.server.delete': 1_500,
  'nova.server.stop': 2_000,
  'nova.server.start': 2_000,
  'nova.server.reboot': 5_000,
  'octavia.loadbalancer.create': 30_000,
  'octavia.loadbalancer.update': 5_000,
  'octavia.loadbalancer.delete': 5_000,
  'octavia.loadbalancer.failover': 30_000,
  'octavia.child.create': 5_000,
  'octavia.child.update': 5_000,
  'octavia.child.delete': 5_000,
  'octavia.member.batch': 5_000,
  'cinder.volume.create': 3_000,
  'cinder.volume.delete': 2_000,
  'cinder.volume.attach': 1_000,
  'neutron.port.bind': 500,
};

export const PROFILES: Readonly<Record<'fast' | 'realistic', Profile>> = {
  fast: { name: 'fast', timeScale: 1, transitions: FAST_TRANSITIONS, latency: {} },
  realistic: {
    name: 'realistic',
    timeScale: 1,
    transitions: REALISTIC_TRANSITIONS,
    latency: {
      '*': 20,
      'keystone POST /v3/auth/tokens': 375,
      'neutron POST /v2.0/ports': 100,
      'neutron POST /v2.0/routers': 1_000,
      'neutron POST /v2.0/floatingips': 1_000,
      'nova POST /v2.1/servers': 400,
      'octavia POST /v2/lbaas/loadbalancers': 300,
      'glance POST /v2/images': 200,
    },
  },
};

export interface ProfileOverrides {
  timeScale?: number;
  transitions?: Partial<Record<TransitionKey, number>>;
  latency?: Record<string, number>;
}

export function resolveProfile(name: 'fast' | 'realistic', overrides: ProfileOverrides = {}): Profile {
  const base = PROFILES[name];
  return {
    name: base.name,
    timeScale: overrides.timeScale ?? base.timeScale,
    transitions: { ...base.transitions, ...overrides.transitions },
    latency: { ...base.latency, ...overrides.latency },
  };
}

export class Timing {
  profile: Profile;
  constructor(profile: Profile) {
    this.profile = profile;
  }

  transition(key: TransitionKey): number {
    return Math.max(0, Math.round(this.profile.transitions[key] * this.profile.timeScale));
  }

  latency(service: string, operation: string): number {
    const l = this.profile.latency;
    const ms = l[`${service} ${operation}`] ?? l[service] ?? l['*'] ?? 0;
    return Math.max(0, Math.round(ms * this.profile.timeScale));
  }
}
