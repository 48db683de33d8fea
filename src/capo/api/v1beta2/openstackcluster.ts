/**
 * OpenStackCluster and OpenStackClusterTemplate, infrastructure.cluster.x-k8s.io/v1beta2 (CAPO
 * main `api/v1beta2/openstackcluster_types.go`): the API server fields gathered under `apiServer`,
 * the network and router attributes under `managedNetwork` and `managedRouter`, `enable*` for
 * `disable*`, `clusterNodesSecurityGroupRules` for `allNodesSecurityGroupRules`; no
 * ready/failureReason/failureMessage in the status, whose conditions are metav1.Conditions.
 */
import {
  acceptedSpecStatus,
  identityRef,
  initialization,
  instanceState,
  networkParam,
  routerParam,
  subnetParam,
} from '../common.ts';
import {
  apiServerLoadBalancer,
  apiServerLoadBalancerStatus,
  networkStatus,
  networkStatusWithSubnets,
  routerStatus,
  securityGroupRuleSpec,
  securityGroupStatus,
  subnetSpec,
} from '../openstackcluster.ts';
import {
  apiEndpoint,
  conditions,
  failureDomains,
  machineResources,
  openStackMachineSpec,
  resolvedMachineSpec,
} from './common.ts';
import { array, boolean, type Infer, integer, object, string } from '../../../kube/crd/schema.ts';

const ruleList = (who: string) =>
  array(securityGroupRuleSpec, { listType: { map: ['name'] }, description: `Extra rules for ${who}.` });

const managedSecurityGroups = object({
  clusterNodesSecurityGroupRules: ruleList('all cluster nodes (not the bastion)'),
  controlPlaneNodesSecurityGroupRules: ruleList('control-plane nodes'),
  workerNodesSecurityGroupRules: ruleList('worker nodes'),
  allowAllInClusterTraffic: boolean({
    description: 'Allow all traffic between cluster nodes instead of the per-port rules.',
  }).default(false),
});

const externalRouterIP = object(
  {
    fixedIP: string({ description: 'The fixed IP in the subnet.' }),
    subnet: subnetParam.describe('The subnet of the router gateway IP.'),
  },
  { required: ['subnet'] },
);

const bastion = object({
  enabled: boolean({
    description:
      'The bastion exists (the default); set false, and wait for it to go, before removing bastion.',
  }).default(true),
  spec: openStackMachineSpec.describe('The bastion server.'),
  availabilityZone: string({ description: 'The availability zone of the bastion.' }),
  floatingIP: string({ format: 'ipv4', description: 'An existing floating IP address for the bastion.' }),
}).rules({ rule: '!self.enabled || has(self.spec)', message: 'spec is required if bastion is enabled' });

const apiServer = object({
  port: integer({ minimum: 0, maximum: 65535, description: 'The API server listener port.' }),
  fixedIP: string({ description: 'The fixed IP (VIP) of the API server.' }),
  floatingIP: string({ description: 'The floating IP of the API server; allocated when unset.' }),
  enableFloatingIP: boolean({ description: 'A floating IP for the API server (the default).' }),
  managedLoadBalancer: apiServerLoadBalancer.describe('An Octavia load balancer for the API server.'),
});

export const openStackClusterSpec = object(
  {
    managedSubnets: array(subnetSpec, {
      maxItems: 1,
      listType: 'atomic',
      description: 'Subnets to create, with a network and a router; nothing is created when empty.',
    }),
    subnets: array(subnetParam, {
      listType: 'atomic',
      description: 'Existing subnets of network; all of them when empty.',
    }),
    primarySubnet: subnetParam.describe(
      'The subnet of the API load balancer VIP and of machines’ default port when several are given; the first when unset.',
    ),
    managedRouter: object({
      externalIPs: array(externalRouterIP, {
        minItems: 1,
        listType: 'atomic',
        description: 'Fixed IPs of the router gateway.',
      }),
    })
      .describe('Attributes of the router the controller creates.')
      .rules({ rule: 'has(self.externalIPs)', message: 'managedRouter must not be empty if set' }),
    router: routerParam.describe('An existing router to use with managedSubnets.'),
    managedNetwork: object({
      mtu: integer({ format: 'int32', description: 'The MTU of the network.' }),
      enablePortSecurity: boolean({ description: 'Port security on the network (the default).' }),
    })
      .describe('Attributes of the network the controller creates.')
      .rules({
        rule: 'self == null || has(self.mtu) || has(self.enablePortSecurity)',
        message: 'managedNetwork must not be empty if set',
      }),
    network: networkParam.describe('An existing network, when managedSubnets is empty.'),
    externalNetwork: networkParam.describe(
      'The external network; the only one there is when unset (none: as if enableExternalNetwork were false).',
    ),
    enableExternalNetwork: boolean({
      description: 'Connect the cluster to an external network (the default).',
    }),
    apiServer: apiServer.describe('The API server endpoint, its load balancer and floating IP.'),
    managedSecurityGroups: managedSecurityGroups.describe(
      'Security groups the controller creates and manages (with default rules when empty).',
    ),
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
    rule: 'has(self.enableExternalNetwork) && !self.enableExternalNetwork ? !has(self.bastion) || !has(self.bastion.floatingIP) : true',
    message: 'bastion floating IP cannot be set when enableExternalNetwork is false',
  },
  {
    rule: 'has(self.enableExternalNetwork) && !self.enableExternalNetwork ? has(self.apiServer) && has(self.apiServer.enableFloatingIP) && !self.apiServer.enableFloatingIP : true',
    message: 'apiServer.enableFloatingIP cannot be true when enableExternalNetwork is false',
  },
);
export type OpenStackClusterSpecV1beta2 = Infer<typeof openStackClusterSpec>;

export const openStackClusterStatus = object({
  conditions,
  initialization,
  network: networkStatusWithSubnets.describe('The cluster network.'),
  externalNetwork: networkStatus.describe('The external network.'),
  router: routerStatus,
  apiServerManagedLoadBalancer: apiServerLoadBalancerStatus,
  failureDomains,
  controlPlaneSecurityGroup: securityGroupStatus,
  workerSecurityGroup: securityGroupStatus,
  bastionSecurityGroup: securityGroupStatus,
  // v1beta2's own resolved spec and resources (enablePortSecurity), so not v1beta1's bastionStatus.
  bastion: object({
    id: string(),
    name: string(),
    sshKeyName: string(),
    state: instanceState,
    ip: string(),
    floatingIP: string(),
    resolved: resolvedMachineSpec,
    resources: machineResources,
  }).describe('The bastion server.'),
  ...acceptedSpecStatus,
});
export type OpenStackClusterStatusV1beta2 = Infer<typeof openStackClusterStatus>;

export const openStackClusterTemplateSpec = object(
  {
    template: object(
      { spec: openStackClusterSpec.describe('The spec of the clusters made from this template.') },
      { required: ['spec'] },
    ),
  },
  { required: ['template'] },
);
