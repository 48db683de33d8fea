/**
 * The extensions of the Zed reference cloud (ML2 with the router and trunk service plugins), as
 * GET /v2.0/extensions lists them. Clients probe these aliases to decide what to call.
 */
import type { SimRequest, SimResponse } from '../core/types.ts';
import { SimError } from '../core/errors.ts';

/** alias, name, updated, description */
const EXTENSIONS: readonly (readonly [string, string, string, string])[] = [
  ['address-group', 'Address group', '2020-07-15T10:00:00-00:00', 'Support address group'],
  ['address-scope', 'Address scope', '2015-07-26T10:00:00-00:00', 'Address scopes extension.'],
  [
    'router-admin-state-down-before-update',
    "Enforce Router's Admin State Down Before Update Extension",
    '2019-07-02T15:56:00',
    'Ensure that the admin state of a router is DOWN (admin_state_up=False) before updating the distributed attribute',
  ],
  ['agent', 'agent', '2013-02-03T10:00:00-00:00', 'The agent management extension.'],
  [
    'agent-resources-synced',
    "Agent's Resource View Synced to Placement",
    '2018-12-19T00:00:00-00:00',
    'Stores success/failure of last sync to Placement',
  ],
  [
    'allowed-address-pairs',
    'Allowed Address Pairs',
    '2013-07-23T10:00:00-00:00',
    'Provides allowed address pairs',
  ],
  [
    'auto-allocated-topology',
    'Auto Allocated Topology Services',
    '2016-01-01T00:00:00-00:00',
    'Auto Allocated Topology Services.',
  ],
  ['availability_zone', 'Availability Zone', '2015-01-01T10:00:00-00:00', 'The availability zone extension.'],
  [
    'availability_zone_filter',
    'Availability Zone Filter Extension',
    '2018-06-22T10:00:00-00:00',
    'Add filter parameters to AvailabilityZone resource',
  ],
  [
    'default-subnetpools',
    'Default Subnetpools',
    '2016-02-18T18:00:00-00:00',
    'Provides ability to mark and use a subnetpool as the default.',
  ],
  [
    'dhcp_agent_scheduler',
    'DHCP Agent Scheduler',
    '2013-02-07T10:00:00-00:00',
    'Schedule networks among dhcp agents',
  ],
  [
    'dvr',
    'Distributed Virtual Router',
    '2014-06-1T10:00:00-00:00',
    'Enables configuration of Distributed Virtual Routers.',
  ],
  [
    'empty-string-filtering',
    'Empty String Filtering Extension',
    '2018-05-01T10:00:00-00:00',
    'Allow filtering by attributes with empty string value',
  ],
  [
    'external-net',
    'Neutron external network',
    '2013-01-14T10:00:00-00:00',
    'Adds external network attribute to network resource.',
  ],
  [
    'extra_dhcp_opt',
    'Neutron Extra DHCP options',
    '2013-03-17T12:00:00-00:00',
    'Extra options configuration for DHCP. For example PXE boot options to DHCP clients can be specified (e.g. tftp-server, server-ip-address, bootfile-name)',
  ],
  [
    'extraroute',
    'Neutron Extra Route',
    '2013-02-01T10:00:00-00:00',
    'Extra routes configuration for L3 router',
  ],
  [
    'extraroute-atomic',
    'Atomically add/remove extra routes',
    '2019-07-10T00:00:00+00:00',
    'Edit extra routes of a router on server side by atomically adding/removing extra routes',
  ],
  [
    'filter-validation',
    'Filter parameters validation',
    '2018-07-04T10:00:00-00:00',
    'Provides validation on filter parameters.',
  ],
  [
    'floating-ip-port-forwarding-detail',
    'Floating IP port forwarding detail',
    '2022-05-06T10:00:00-00:00',
    "Allow list floating ip return more port forwarding data, include'id' and 'internal_port_id'",
  ],
  [
    'fip-port-details',
    'Floating IP Port Details Extension',
    '2018-04-09T10:00:00-00:00',
    'Add port_details attribute to Floating IP resource',
  ],
  [
    'flavors',
    'Neutron Service Flavors',
    '2015-09-17T10:00:00-00:00',
    'Flavor specification for Neutron advanced services.',
  ],
  [
    'floatingip-pools',
    'Floating IP Pools Extension',
    '2018-03-21T10:00:00-00:00',
    'Provides a floating IP pools API.',
  ],
  [
    'ip-substring-filtering',
    'IP address substring filtering',
    '2017-11-28T09:00:00-00:00',
    'Provides IP address substring filtering when listing ports',
  ],
  [
    'router',
    'Neutron L3 Router',
    '2012-07-20T10:00:00-00:00',
    'Router abstraction for basic L3 forwarding between L2 Neutron networks and access to external networks via a NAT gateway.',
  ],
  [
    'ext-gw-mode',
    'Neutron L3 Configurable external gateway mode',
    '2013-03-28T10:00:00-00:00',
    'Extension of the router abstraction for specifying whether SNAT should occur on the external gateway',
  ],
  ['l3-ha', 'HA Router extension', '2014-04-26T00:00:00-00:00', 'Adds HA capability to routers.'],
  ['l3-flavors', 'Router Flavor Extension', '2016-05-17T00:00:00-00:00', 'Flavor support for routers.'],
  [
    'l3-port-ip-change-not-allowed',
    'Prevent L3 router ports IP address change extension',
    '2018-10-09T10:00:00-00:00',
    'Prevent change of IP address for some L3 router ports',
  ],
  [
    'l3_agent_scheduler',
    'L3 Agent Scheduler',
    '2013-02-07T10:00:00-00:00',
    'Schedule routers among l3 agents',
  ],
  [
    'multi-provider',
    'Multi Provider Network',
    '2013-06-27T10:00:00-00:00',
    'Expose mapping of virtual networks to multiple physical networks',
  ],
  ['net-mtu', 'Network MTU', '2015-03-25T10:00:00-00:00', 'Provides MTU attribute for a network resource.'],
  [
    'net-mtu-writable',
    'Network MTU (writable)',
    '2017-07-12T00:00:00-00:00',
    'Provides a writable MTU attribute for a network resource.',
  ],
  [
    'network_availability_zone',
    'Network Availability Zone',
    '2015-01-01T10:00:00-00:00',
    'Availability zone support for network.',
  ],
  [
    'network-ip-availability',
    'Network IP Availability',
    '2015-09-24T00:00:00-00:00',
    'Provides IP availability data for each network and subnet.',
  ],
  [
    'pagination',
    'Pagination support',
    '2016-06-12T00:00:00-00:00',
    'Extension that indicates that pagination is enabled.',
  ],
  [
    'port-device-profile',
    'Port device profile',
    '2020-12-17T10:00:00-00:00',
    'Expose the port device profile (Cyborg)',
  ],
  [
    'port-mac-override',
    'Neutron Port MAC address override',
    '2022-03-18T10:00:00-00:00',
    'Allow overriding the MAC address of a direct-physical Port via the active binding profile',
  ],
  [
    'port-mac-address-regenerate',
    'Neutron Port MAC address regenerate',
    '2018-05-03T10:00:00-00:00',
    'Network port MAC address regenerate',
  ],
  [
    'port-numa-affinity-policy',
    'Port NUMA affinity policy',
    '2020-07-08T10:00:00-00:00',
    'Expose the port NUMA affinity policy',
  ],
  [
    'binding',
    'Port Binding',
    '2014-02-03T10:00:00-00:00',
    'Expose port bindings of a virtual port to external application',
  ],
  [
    'binding-extended',
    'Port Bindings Extended',
    '2017-07-17T10:00:00-00:00',
    'Expose port bindings of a virtual port to external application',
  ],
  ['port-security', 'Port Security', '2012-07-23T10:00:00-00:00', 'Provides port security'],
  [
    'project-id',
    'project_id field enabled',
    '2016-09-09T09:09:09-09:09',
    'Extension that indicates that project_id field is enabled.',
  ],
  [
    'provider',
    'Provider Network',
    '2012-09-07T10:00:00-00:00',
    'Expose mapping of virtual networks to physical networks',
  ],
  [
    'quota-check-limit',
    'Quota engine limit check',
    '2021-09-08T16:00:00-00:00',
    'Support for checking the resource usage before applying a new quota limit',
  ],
  [
    'quotas',
    'Quota management support',
    '2012-07-29T10:00:00-00:00',
    'Expose functions for quotas management per project',
  ],
  [
    'quota_details',
    'Quota details management support',
    '2017-02-10T10:00:00-00:00',
    'Expose functions for quotas usage statistics per project',
  ],
  [
    'rbac-policies',
    'RBAC Policies',
    '2015-06-17T12:15:12-00:00',
    'Allows creation and modification of policies that control tenant access to resources.',
  ],
  [
    'rbac-address-group',
    'Add address_group type to RBAC',
    '2021-01-20T00:00:00-00:00',
    'Add address_group type to network RBAC',
  ],
  [
    'rbac-address-scope',
    'Add address_scope type to RBAC',
    '2020-02-12T00:00:00-00:00',
    'Add address_scope type to RBAC',
  ],
  [
    'rbac-security-groups',
    'Add security_group type to network RBAC',
    '2019-02-14T00:00:00-00:00',
    'Add security_group type to network RBAC',
  ],
  [
    'rbac-subnetpool',
    'Add subnetpool type to RBAC',
    '2020-02-05T00:00:00-00:00',
    'Add subnetpool type to RBAC',
  ],
  [
    'revision-if-match',
    'If-Match constraints based on revision_number',
    '2016-12-11T00:00:00-00:00',
    'Extension indicating that If-Match based on revision_number is supported.',
  ],
  [
    'standard-attr-revisions',
    'Resource revision numbers',
    '2016-04-11T10:00:00-00:00',
    'This extension will display the revision number of neutron resources.',
  ],
  [
    'router_availability_zone',
    'Router Availability Zone',
    '2015-01-01T10:00:00-00:00',
    'Availability zone support for router.',
  ],
  [
    'security-groups-normalized-cidr',
    'Normalized CIDR field for security group rules',
    '2020-07-28T10:00:00-00:00',
    'Add new field with normalized remote_ip_prefix cidr in SG rule',
  ],
  [
    'port-security-groups-filtering',
    'Port filtering on security groups',
    '2018-01-09T09:00:00-00:00',
    'Provides security groups filtering when listing ports',
  ],
  [
    'security-groups-remote-address-group',
    'Remote address group id field for security group rules',
    '2020-08-25T10:00:00-00:00',
    'Add new field of remote address group id in SG rules',
  ],
  [
    'security-groups-shared-filtering',
    'Security group filtering on the shared field',
    '2021-10-05T09:00:00-00:00',
    'Support filtering security groups on the shared field',
  ],
  ['security-group', 'security-group', '2012-10-05T10:00:00-00:00', 'The security groups extension.'],
  [
    'service-type',
    'Neutron Service Type Management',
    '2013-01-20T00:00:00-00:00',
    'API for retrieving service providers for Neutron advanced services',
  ],
  [
    'sorting',
    'Sorting support',
    '2016-06-12T00:00:00-00:00',
    'Extension that indicates that sorting is enabled.',
  ],
  [
    'standard-attr-description',
    'standard-attr-description',
    '2016-02-10T10:00:00-00:00',
    'Extension to add descriptions to standard attributes',
  ],
  [
    'stateful-security-group',
    'Stateful security group',
    '2019-11-26T09:00:00-00:00',
    'Indicates if the security group is stateful or not',
  ],
  [
    'subnet_onboard',
    'Subnet Onboard',
    '2018-12-18T09:00:00-00:00',
    'Provides support for onboarding subnets into subnet pools',
  ],
  [
    'subnet-service-types',
    'Subnet service types',
    '2016-03-15T18:00:00-00:00',
    'Provides ability to set the subnet service_types field',
  ],
  [
    'subnet_allocation',
    'Subnet Allocation',
    '2015-03-30T10:00:00-00:00',
    'Enables allocation of subnets from a subnet pool',
  ],
  [
    'subnetpool-prefix-ops',
    'Subnet Pool Prefix Operations',
    '2019-02-08T10:00:00-00:00',
    'Provides support for adjusting the prefix list of subnet pools',
  ],
  [
    'standard-attr-tag',
    'Tag support for resources with standard attribute: port, subnet, subnetpool, network, security_group, router, floatingip, policy, trunk, network_segment_range',
    '2017-01-01T00:00:00-00:00',
    'Enables to set tag on resources with standard attribute.',
  ],
  [
    'standard-attr-timestamp',
    'Resource timestamps',
    '2016-09-12T10:00:00-00:00',
    'Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes.',
  ],
  ['trunk', 'Trunk Extension', '2016-01-01T10:00:00-00:00', 'Provides support for trunk ports'],
  ['trunk-details', 'Trunk port details', '2016-01-01T10:00:00-00:00', 'Expose trunk port details'],
];

const view = ([alias, name, updated, description]: readonly [string, string, string, string]) => ({
  name,
  alias,
  description,
  updated,
  links: [],
});

export function listExtensions(): SimResponse {
  return { status: 200, body: { extensions: EXTENSIONS.map(view) } };
}

export function showExtension(req: SimRequest): SimResponse {
  const alias = req.params.alias ?? '';
  const ext = EXTENSIONS.find((e) => e[0] === alias);
  if (!ext) throw new SimError(404, `Extension with alias ${alias} does not exist`, { type: 'HTTPNotFound' });
  return { status: 200, body: { extension: view(ext) } };
}

/** Resources listed by GET /v2.0, as Neutron's API root shows them. */
const RESOURCES: readonly (readonly [string, string])[] = [
  ['subnet', 'subnets'],
  ['network', 'networks'],
  ['port', 'ports'],
  ['router', 'routers'],
  ['floatingip', 'floatingips'],
  ['security_group', 'security-groups'],
  ['security_group_rule', 'security-group-rules'],
  ['trunk', 'trunks'],
  ['quota', 'quotas'],
  ['network_ip_availability', 'network-ip-availabilities'],
  ['availability_zone', 'availability_zones'],
  ['extension', 'extensions'],
];

export function apiRoot(req: SimRequest): SimResponse {
  return {
    status: 200,
    body: {
      resources: RESOURCES.map(([name, collection]) => ({
        links: [{ href: `${req.baseUrl}/v2.0/${collection}`, rel: 'self' }],
        name,
        collection,
      })),
    },
  };
}

export function versions(req: SimRequest): SimResponse {
  return {
    status: 200,
    body: {
      versions: [{ id: 'v2.0', status: 'CURRENT', links: [{ rel: 'self', href: `${req.baseUrl}/v2.0/` }] }],
    },
  };
}
