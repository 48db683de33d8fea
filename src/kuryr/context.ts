/**
 * What every kuryr controller's registration gets: one OpenStack client (kuryr acts as one identity,
 * `[neutron]` of kuryr.conf), the options, the drivers that say where a pod's port goes and which
 * groups it carries, the cluster's owner tags, the log and the metrics registry. The command
 * (src/kuryr/cmd.ts) and the test bed (testing/env.ts) build it; controllers only read it.
 */
import type { Logger } from '../lib/log.ts';
import type { Registry } from '../lib/metrics.ts';
import type { OpenStackClient } from '../openstack/client.ts';
import { ownerTags } from './api/names.ts';
import {
  defaultSecurityGroups,
  defaultSubnets,
  type SecurityGroupsDriver,
  type SubnetsDriver,
} from './drivers.ts';
import type { KuryrOptions } from './options.ts';

export interface KuryrContext {
  os: OpenStackClient;
  options: KuryrOptions;
  /** The project kuryr makes its objects in: `[neutron_defaults] project`, else the client's. */
  projectId: string;
  /** `ownerTags(options)`: on every Neutron and Octavia object kuryr creates. */
  tags: readonly string[];
  subnets: SubnetsDriver;
  securityGroups: SecurityGroupsDriver;
  log: Logger;
  registry: Registry;
}

/**
 * A context with the default drivers; the namespace and policy drivers replace them (the parts that
 * build those set `subnets` / `securityGroups` when `[kubernetes] pod_subnets_driver` /
 * `pod_security_groups_driver` name them).
 */
export function kuryrContext(parts: {
  os: OpenStackClient;
  options: KuryrOptions;
  projectId: string;
  log: Logger;
  registry: Registry;
}): KuryrContext {
  const { options } = parts;
  return {
    ...parts,
    projectId: options.neutronDefaults.project || parts.projectId,
    tags: ownerTags({ resourceTags: options.neutronDefaults.resourceTags, clusterName: options.clusterName }),
    subnets: defaultSubnets(parts.os, options),
    securityGroups: defaultSecurityGroups(options),
  };
}
