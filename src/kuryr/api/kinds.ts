/**
 * Kuryr's four CRDs (group openstack.org/v1), declared once with the schema builder: the types, the
 * REST mappings (`kuryrKinds.X`) and the files of deploy/kuryr/crds (`npm run gen:crds`). Fields,
 * short names and printer columns are upstream's (KURYR `kubernetes_crds/kuryr_crds/*.yaml`), so a
 * cluster that ran upstream's controller keeps its objects and `kubectl get kp` reads the same.
 * Like upstream's, none has a status subresource: status is written with the object.
 */
import { defineKind, kubeObject, type Kind, type PrinterColumn } from '../../kube/crd/kind.ts';
import {
  anyObject,
  array,
  boolean,
  integer,
  type Infer,
  map,
  object,
  openObject,
  string,
} from '../../kube/crd/schema.ts';
import { KURYR_GROUP, KURYR_VERSION } from './common.ts';

const common = {
  group: KURYR_GROUP,
  version: KURYR_VERSION,
  scope: 'Namespaced',
  statusSubresource: false,
} as const;
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

// KuryrPort: one per pod on the pod network, named as the pod.

const kuryrPortVif = openObject({
  default: boolean({ description: 'Whether this is the pod default interface (eth0).' }),
  vif: anyObject({
    description: 'The os-vif VIF primitive (for nested VLAN: VIFVlanNested), see src/kuryr/api/vif.ts.',
  }),
});

export const kuryrPort = defineKind({
  ...common,
  kind: 'KuryrPort',
  plural: 'kuryrports',
  shortNames: ['kp'],
  printerColumns: [
    { name: 'PodUID', type: 'string', description: 'Pod UID', jsonPath: '.spec.podUid' },
    {
      name: 'Nodename',
      type: 'string',
      description: 'Name of the node corresponding pod lives in',
      jsonPath: '.spec.podNodeName',
    },
    { name: 'labels', type: 'string', description: 'Labels for the CRD', jsonPath: '.metadata.labels' },
  ],
  schema: kubeObject({
    description: 'The Neutron port(s) of one pod: its VIFs, by interface name.',
    spec: object(
      {
        podUid: string(),
        podNodeName: string(),
        podStatic: boolean({ description: 'A static (mirror) pod.' }),
      },
      { required: ['podUid', 'podNodeName'] },
    ),
    status: object(
      {
        vifs: map(kuryrPortVif, { description: 'Interface name → VIF.' }),
      },
      { required: ['vifs'] },
    ),
  }),
});
export type KuryrPort = Infer<typeof kuryrPort.schema>;

// KuryrNetwork: one per namespace with the namespace subnet driver.

export const kuryrNetwork = defineKind({
  ...common,
  kind: 'KuryrNetwork',
  plural: 'kuryrnetworks',
  shortNames: ['kns'],
  printerColumns: [
    {
      name: 'SUBNET-CIDR',
      type: 'string',
      description: 'The subnet CIDR allocated to the namespace',
      jsonPath: '.status.subnetCIDR',
    },
    age,
  ],
  schema: kubeObject({
    description: "A namespace's Neutron network, subnet and router interface.",
    spec: object(
      {
        nsName: string(),
        projectId: string(),
        nsLabels: anyObject(),
      },
      { required: ['nsName', 'projectId', 'nsLabels'] },
    ),
    status: object({
      netId: string(),
      populated: boolean(),
      routerId: string(),
      subnetCIDR: string(),
      subnetId: string(),
      nsLabels: anyObject(),
    }),
  }),
});
export type KuryrNetwork = Infer<typeof kuryrNetwork.schema>;

// KuryrLoadBalancer: one per Service served by Octavia, named as the Service.

const klbEndpoint = object({
  addresses: array(string()),
  conditions: object({ ready: boolean() }),
  hostname: string(),
  targetRef: object({
    kind: string(),
    name: string(),
    namespace: string(),
    resourceVersion: string(),
    uid: string(),
  }),
  topology: anyObject(),
});

const klbPortRef = object({ name: string(), port: integer(), protocol: string() });

export const kuryrLoadBalancer = defineKind({
  ...common,
  kind: 'KuryrLoadBalancer',
  plural: 'kuryrloadbalancers',
  shortNames: ['klb'],
  printerColumns: [
    {
      name: 'PROJECT-ID',
      type: 'string',
      description: 'The ID of the PROJECT associated to the loadbalancer',
      jsonPath: '.spec.project_id',
    },
    age,
  ],
  schema: kubeObject({
    description: "A Service's Octavia load balancer: what it should be (spec) and what it is (status).",
    specRequired: false,
    spec: object({
      endpointSlices: array(object({ endpoints: array(klbEndpoint), ports: array(klbPortRef) })),
      ip: string(),
      lb_ip: string(),
      ports: array(
        object(
          { name: string(), port: integer(), protocol: string(), targetPort: string() },
          { required: ['port', 'protocol', 'targetPort'] },
        ),
      ),
      project_id: string(),
      security_groups_ids: array(string()),
      subnet_id: string(),
      type: string(),
      provider: string(),
      timeout_client_data: integer(),
      timeout_member_data: integer(),
    }),
    status: object({
      listeners: array(
        object(
          {
            id: string(),
            loadbalancer_id: string(),
            name: string(),
            port: integer(),
            project_id: string(),
            protocol: string(),
            timeout_client_data: integer(),
            timeout_member_data: integer(),
          },
          { required: ['id', 'loadbalancer_id', 'name', 'port', 'project_id', 'protocol'] },
        ),
      ),
      loadbalancer: object(
        {
          id: string(),
          ip: string(),
          name: string(),
          port_id: string(),
          project_id: string(),
          provider: string(),
          security_groups: array(string()),
          subnet_id: string(),
        },
        {
          required: ['id', 'ip', 'name', 'port_id', 'project_id', 'provider', 'security_groups', 'subnet_id'],
        },
      ),
      members: array(
        object(
          {
            id: string(),
            ip: string(),
            name: string(),
            pool_id: string(),
            port: integer(),
            project_id: string(),
            subnet_id: string(),
          },
          { required: ['id', 'ip', 'name', 'pool_id', 'port', 'project_id', 'subnet_id'] },
        ),
      ),
      pools: array(
        object(
          {
            id: string(),
            listener_id: string(),
            loadbalancer_id: string(),
            name: string(),
            project_id: string(),
            protocol: string(),
          },
          { required: ['id', 'listener_id', 'loadbalancer_id', 'name', 'project_id', 'protocol'] },
        ),
      ),
      service_pub_ip_info: object(
        { ip_id: string(), ip_addr: string(), alloc_method: string() },
        { required: ['ip_id', 'ip_addr', 'alloc_method'] },
      ),
    }),
  }),
});
export type KuryrLoadBalancer = Infer<typeof kuryrLoadBalancer.schema>;

// KuryrNetworkPolicy: one per NetworkPolicy, with its security group.

const sgRule = object({
  description: string(),
  direction: string(),
  ethertype: string(),
  port_range_max: integer(),
  port_range_min: integer(),
  protocol: string(),
  remote_ip_prefix: string(),
});

const knpRule = object(
  {
    affectedPods: array(
      object({ podIP: string(), podNamespace: string() }, { required: ['podIP', 'podNamespace'] }),
    ),
    namespace: string(),
    sgRule,
  },
  { required: ['sgRule'] },
);

export const kuryrNetworkPolicy = defineKind({
  ...common,
  kind: 'KuryrNetworkPolicy',
  plural: 'kuryrnetworkpolicies',
  shortNames: ['knp'],
  printerColumns: [
    {
      name: 'SG-ID',
      type: 'string',
      description: 'The ID of the SG associated to the policy',
      jsonPath: '.status.securityGroupId',
    },
    age,
  ],
  schema: kubeObject({
    description: 'A NetworkPolicy as a security group: the rules it should have (spec) and has (status).',
    spec: object(
      {
        egressSgRules: array(knpRule),
        ingressSgRules: array(knpRule),
        podSelector: anyObject(),
        policyTypes: array(string()),
      },
      { required: ['egressSgRules', 'ingressSgRules', 'podSelector', 'policyTypes'] },
    ),
    status: object(
      {
        securityGroupId: string(),
        securityGroupRules: array(
          object(
            {
              id: string(),
              description: string(),
              direction: string(),
              ethertype: string(),
              port_range_max: integer(),
              port_range_min: integer(),
              protocol: string(),
              remote_ip_prefix: string(),
              security_group_id: string(),
            },
            { required: ['id'] },
          ),
        ),
        podSelector: anyObject(),
      },
      { required: ['securityGroupRules'] },
    ),
  }),
});
export type KuryrNetworkPolicy = Infer<typeof kuryrNetworkPolicy.schema>;

/** The REST mappings, for KubeClient, informers and controllers. */
export const kuryrKinds = {
  KuryrPort: kuryrPort.resource,
  KuryrNetwork: kuryrNetwork.resource,
  KuryrLoadBalancer: kuryrLoadBalancer.resource,
  KuryrNetworkPolicy: kuryrNetworkPolicy.resource,
} as const;

/** Every kind, in the order the CRD files are written. */
export const ALL_KINDS: readonly Kind<object>[] = [
  kuryrLoadBalancer,
  kuryrNetworkPolicy,
  kuryrNetwork,
  kuryrPort,
];
