/**
 * OpenStackCluster and OpenStackClusterTemplate, infrastructure.cluster.x-k8s.io/v1beta1 (CAPO
 * v0.14 `openstackcluster_types.go`, `openstackclustertemplate_types.go`).
 */
import {
  acceptedSpecStatus,
  apiEndpoint,
  conditions,
  failureDomains,
  identityRef,
  initialization,
  machineResources,
  networkParam,
  resolvedMachineSpec,
  routerParam,
  subnetParam,
  instanceState,
} from './common.ts';
import { openStackMachineSpec } from './openstackmachine.ts';
import { array, boolean, enumOf, type Infer, integer, object, string } from '../../kube/crd/schema.ts';

export const subnetSpec = object(
  {
    cidr: string({ description: 'The address range of the subnet, e.g. 10.0.0.0/24.' }),
    dnsNameservers: array(string(), {
      description: 'DNS servers handed out on the subnet (same IP version as cidr).',
    }),
    allocationPools: array(
      object(
        {
          start: string({ description: 'The lowest address of the pool.' }),
          end: string({ description: 'The highest address of the pool.' }),
        },
        { required: ['start', 'end'] },
      ),
      { description: 'The ranges machines get addresses from.' },
    ),
  },
  { required: ['cidr'] },
);

export const MANAGED_SECURITY_GROUP_NAMES = ['bastion', 'controlplane', 'worker'] as const;

export const securityGroupRuleSpec = object(
  {
    name: string({ description: 'Identifies the rule here; not sent to OpenStack.' }),
    description: string(),
    direction: enumOf(['ingress', 'egress'] as const),
    etherType: enumOf(['IPv4', 'IPv6'] as const),
    portRangeMin: integer(),
    portRangeMax: integer(),
    protocol: string(),
    remoteGroupID: string({ description: 'One of remoteGroupID, remoteIPPrefix, remoteManagedGroups.' }),
    remoteIPPrefix: string({ description: 'One of remoteGroupID, remoteIPPrefix, remoteManagedGroups.' }),
    remoteManagedGroups: array(enumOf(MANAGED_SECURITY_GROUP_NAMES), {
      description: 'One of remoteGroupID, remoteIPPrefix, remoteManagedGroups.',
    }),
  },
  { required: ['name', 'direction'] },
);
export type SecurityGroupRuleSpec = Infer<typeof securityGroupRuleSpec>;

const ruleList = (who: string) =>
  array(securityGroupRuleSpec, { listType: { map: ['name'] }, description: `Extra rules for ${who}.` });

const managedSecurityGroups = object(
  {
    allNodesSecurityGroupRules: ruleList('all nodes'),
    controlPlaneNodesSecurityGroupRules: ruleList('control-plane nodes'),
    workerNodesSecurityGroupRules: ruleList('worker nodes'),
    allowAllInClusterTraffic: boolean({
      description: 'Allow all traffic between cluster nodes instead of the per-port rules.',
    }).default(false),
  },
  { required: ['allowAllInClusterTraffic'] },
);

export const apiServerLoadBalancer = object(
  {
    enabled: boolean({
      description: 'Create the load balancer; to have none, leave apiServerLoadBalancer out.',
    }).default(true),
    additionalPorts: array(integer(), { listType: 'set', description: 'More TCP ports to balance.' }),
    allowedCIDRs: array(string(), { listType: 'set', description: 'Sources allowed on every listener.' }),
    provider: string({ description: 'The Octavia provider; the Octavia default when unset.' }),
    network: networkParam.describe('The network of the VIP.'),
    subnets: array(subnetParam, {
      listType: 'atomic',
      description: 'The VIP subnet (only the first is used).',
    }),
    availabilityZone: string({ description: 'The Octavia availability zone.' }),
    flavor: string({ description: 'The Octavia flavor.' }),
    monitor: object({
      delay: integer({ minimum: 0, description: 'Seconds between probes.' }).default(10),
      timeout: integer({ minimum: 0, description: 'Seconds a probe may take.' }).default(5),
      maxRetries: integer({ minimum: 0, maximum: 10, description: 'Successes before ONLINE.' }).default(5),
      maxRetriesDown: integer({ minimum: 1, maximum: 10, description: 'Failures before ERROR.' }).default(3),
    }).describe('The health monitor of the API pool.'),
  },
  { required: ['enabled'] },
);

export const bastion = object({
  enabled: boolean({
    description:
      'The bastion exists (the default); set false, and wait for it to go, before removing bastion.',
  }).default(true),
  spec: openStackMachineSpec.describe('The bastion server.'),
  availabilityZone: string({ description: 'The availability zone of the bastion.' }),
  floatingIP: string({ format: 'ipv4', description: 'An existing floating IP address for the bastion.' }),
}).rules({ rule: '!self.enabled || has(self.spec)', message: 'spec is required if bastion is enabled' });
export type Bastion = Infer<typeof bastion>;

export const openStackClusterSpec = object(
  {
    managedSubnets: array(subnetSpec, {
      maxItems: 1,
      listType: 'atomic',
      description: 'Subnets to create, with a network and a router; nothing is created when empty.',
    }),
    router: routerParam.describe('An existing router to use with managedSubnets.'),
    network: networkParam.describe('An existing network, when managedSubnets is empty.'),
    subnets: array(subnetParam, {
      listType: 'atomic',
      description:
        'Existing subnets of network (one IPv4, one IPv6; more with primarySubnet, as CAPO v1beta2 allows); all of them when empty.',
    }),
    primarySubnet: subnetParam.describe(
      'The subnet of the API load balancer VIP and of machines’ default port when several are given; the first when unset.',
    ),
    networkMTU: integer({ description: 'The MTU of a network the controller creates.' }),
    externalRouterIPs: array(
      object(
        {
          fixedIP: string({ description: 'The fixed IP in the subnet.' }),
          subnet: subnetParam.describe('The subnet of the router gateway IP.'),
        },
        { required: ['subnet'] },
      ),
      { listType: 'atomic', description: 'Fixed IPs of the router gateway.' },
    ),
    externalNetwork: networkParam.describe(
      'The external network; the only one there is when unset (none: as if disableExternalNetwork).',
    ),
    disableExternalNetwork: boolean({ description: 'Do not connect the cluster to an external network.' }),
    apiServerLoadBalancer: apiServerLoadBalancer.describe('An Octavia load balancer for the API server.'),
    disableAPIServerFloatingIP: boolean({ description: 'No floating IP for the API server.' }),
    apiServerFloatingIP: string({ description: 'The floating IP of the API server; allocated when unset.' }),
    apiServerFixedIP: string({ description: 'The fixed IP (VIP) of the API server.' }),
    apiServerPort: integer({ minimum: 0, maximum: 65535, description: 'The API server listener port.' }),
    managedSecurityGroups: managedSecurityGroups.describe(
      'Security groups the controller creates and manages (with default rules when empty).',
    ),
    disablePortSecurity: boolean({ description: 'Port security off on the cluster network.' }),
    tags: array(string(), { listType: 'set', description: 'Tags of every resource that supports them.' }),
    controlPlaneEndpoint: apiEndpoint.describe(
      'The API endpoint; filled in by the controller unless set; immutable once host is set.',
    ),
    controlPlaneAvailabilityZones: array(string(), {
      listType: 'set',
      description: 'The availability zones control-plane machines may use.',
    }),
    controlPlaneOmitAvailabilityZone: boolean({
      description: 'Leave the availability zone of control-plane machines to Nova.',
    }),
    bastion: bastion.describe('A server to log in to the nodes through.'),
    identityRef: identityRef.describe('The credentials for the cluster and, by default, its machines.'),
  },
  { required: ['identityRef'], description: 'The desired state of an OpenStackCluster.' },
).rules(
  {
    rule: 'has(self.disableExternalNetwork) && self.disableExternalNetwork ? !has(self.bastion) || !has(self.bastion.floatingIP) : true',
    message: 'bastion floating IP cannot be set when disableExternalNetwork is true',
  },
  {
    rule: 'has(self.disableExternalNetwork) && self.disableExternalNetwork ? has(self.disableAPIServerFloatingIP) && self.disableAPIServerFloatingIP : true',
    message: 'disableAPIServerFloatingIP cannot be false when disableExternalNetwork is true',
  },
);
export type OpenStackClusterSpec = Infer<typeof openStackClusterSpec>;

export const tagsList = array(string());

export const networkStatus = object(
  { name: string(), id: string(), tags: tagsList },
  { required: ['name', 'id'] },
);

export const networkStatusWithSubnets = object(
  {
    name: string(),
    id: string(),
    tags: tagsList,
    subnets: array(
      object(
        { name: string(), id: string(), cidr: string(), tags: tagsList },
        { required: ['name', 'id', 'cidr'] },
      ),
    ),
  },
  { required: ['name', 'id'] },
);

export const securityGroupStatus = object({ name: string(), id: string() }, { required: ['name', 'id'] });

/** Status parts: the router and load balancer's both versions share (v1beta2 renames the field); v1beta1's bastion. */
export const routerStatus = object(
  { name: string(), id: string(), tags: tagsList, ips: tagsList },
  { required: ['name', 'id'] },
).describe('The cluster router.');
export const apiServerLoadBalancerStatus = object(
  {
    name: string(),
    id: string(),
    ip: string(),
    internalIP: string(),
    allowedCIDRs: tagsList,
    tags: tagsList,
    loadBalancerNetwork: networkStatusWithSubnets,
  },
  { required: ['name', 'id', 'ip', 'internalIP'] },
).describe('The API server load balancer.');
export const bastionStatus = object({
  id: string(),
  name: string(),
  sshKeyName: string(),
  state: instanceState,
  ip: string(),
  floatingIP: string(),
  resolved: resolvedMachineSpec,
  resources: machineResources,
}).describe('The bastion server.');

export const openStackClusterStatus = object({
  ready: boolean({ description: 'Deprecated: the cluster infrastructure is ready.' }).default(false),
  initialization,
  network: networkStatusWithSubnets.describe('The cluster network.'),
  externalNetwork: networkStatus.describe('The external network.'),
  router: routerStatus,
  apiServerLoadBalancer: apiServerLoadBalancerStatus,
  failureDomains,
  controlPlaneSecurityGroup: securityGroupStatus,
  workerSecurityGroup: securityGroupStatus,
  bastionSecurityGroup: securityGroupStatus,
  bastion: bastionStatus,
  failureReason: string({ description: 'Deprecated.' }),
  failureMessage: string({ description: 'Deprecated.' }),
  conditions,
  ...acceptedSpecStatus,
});
export type OpenStackClusterStatus = Infer<typeof openStackClusterStatus>;

export const openStackClusterTemplateSpec = object(
  {
    template: object(
      { spec: openStackClusterSpec.describe('The spec of the clusters made from this template.') },
      { required: ['spec'] },
    ),
  },
  { required: ['template'] },
);
export type OpenStackClusterTemplateSpec = Infer<typeof openStackClusterTemplateSpec>;
