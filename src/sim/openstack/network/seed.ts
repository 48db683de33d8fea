/** The cloud's starting point, as devstack leaves it: an external network `public` with `public-subnet`. */
import type { EmulatedCloud } from '../core/cloud.ts';
import { createNetwork } from './networks.ts';
import type { NeutronState } from './state.ts';
import { createSubnet } from './subnets.ts';

interface ProjectLookup {
  projectByName?(name: string, domainId: string): { id: string } | undefined;
}

/** IdentityApi has no lookup by name; Keystone's store has one, which is what this asks for. */
function adminProjectId(cloud: EmulatedCloud): string | undefined {
  const identity = (cloud as { identity?: unknown }).identity as ProjectLookup | undefined;
  return identity?.projectByName?.('admin', 'default')?.id;
}

/** Idempotent; retried on each use until Keystone can name the admin project. */
export function seedNeutron(state: NeutronState): void {
  if (state.seeded) return;
  const admin = adminProjectId(state.cloud);
  if (!admin) return;
  state.seeded = true;
  const actor = { projectId: admin, isAdmin: true };
  const net = createNetwork(state, actor, {
    name: 'public',
    'router:external': true,
    is_default: true,
    'provider:network_type': 'flat',
    'provider:physical_network': 'datacentre',
  });
  createSubnet(state, actor, {
    network_id: net.id,
    name: 'public-subnet',
    ip_version: 4,
    cidr: '172.24.4.0/24',
    gateway_ip: '172.24.4.1',
    enable_dhcp: false,
  });
}
