/**
 * Objects of CAPO's kinds in both versions, small and readable, for the conversion tests: pairs
 * that say the same thing in v1beta1 and v1beta2, objects with something only one version can
 * say, and v1beta2 objects shaped as CAPO's templates write them (default, without-lb, flatcar,
 * ClusterClass).
 */
type Obj = Record<string, any> & { apiVersion: string; kind: string };

const G = 'infrastructure.cluster.x-k8s.io';
const meta = (name: string) => ({
  name,
  namespace: 'capo-demo',
  labels: { 'cluster.x-k8s.io/cluster-name': 'demo' },
  annotations: { 'example.com/keep': 'yes' },
});
const identityRef = { type: 'Secret', name: 'demo-cloud-config', cloudName: 'openstack' };
const image = { filter: { name: 'ubuntu-2404-kube-v1.32.4' } };
const T = '2026-11-27T10:00:00Z';

/** The same object in both versions: each converts into the other exactly. */
export interface Pair {
  name: string;
  v1beta1: Obj;
  v1beta2: Obj;
}

export const PAIRS: Pair[] = [
  {
    name: 'OpenStackMachine by flavor name, a port without port security, a status that is ready',
    v1beta1: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackMachine',
      metadata: meta('demo-md-0-abc'),
      spec: {
        flavor: 'm1.medium',
        image,
        sshKeyName: 'demo',
        ports: [{ network: { filter: { name: 'storage' } }, disablePortSecurity: true }, {}],
        identityRef,
      },
      status: {
        ready: true,
        instanceID: '5c6f0b58-2a4d-4d3c-9d62-1b1a4e0b3f10',
        instanceState: 'ACTIVE',
        addresses: [{ type: 'InternalIP', address: '10.6.0.12' }],
        resolved: {
          flavorID: 'f-medium',
          imageID: 'img-1',
          ports: [
            { name: 'demo-md-0-abc-0', description: '', networkID: 'net-2', disablePortSecurity: true },
          ],
        },
        resources: { ports: [{ id: 'port-1' }] },
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: T },
          { type: 'InstanceReady', status: 'True', lastTransitionTime: T, observedGeneration: 1 },
        ],
      },
    },
    v1beta2: {
      apiVersion: `${G}/v1beta2`,
      kind: 'OpenStackMachine',
      metadata: meta('demo-md-0-abc'),
      spec: {
        flavor: { filter: { name: 'm1.medium' } },
        image,
        sshKeyName: 'demo',
        ports: [{ network: { filter: { name: 'storage' } }, enablePortSecurity: false }, {}],
        identityRef,
      },
      status: {
        instanceID: '5c6f0b58-2a4d-4d3c-9d62-1b1a4e0b3f10',
        instanceState: 'ACTIVE',
        addresses: [{ type: 'InternalIP', address: '10.6.0.12' }],
        resolved: {
          flavorID: 'f-medium',
          imageID: 'img-1',
          ports: [
            { name: 'demo-md-0-abc-0', description: '', networkID: 'net-2', enablePortSecurity: false },
          ],
        },
        resources: { ports: [{ id: 'port-1' }] },
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: T },
          { type: 'InstanceReady', status: 'True', lastTransitionTime: T, observedGeneration: 1 },
        ],
      },
    },
  },
  {
    name: 'OpenStackMachineTemplate by flavor ID, with conditions and capacity',
    v1beta1: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackMachineTemplate',
      metadata: meta('demo-control-plane'),
      spec: { template: { spec: { flavorID: '3', image, sshKeyName: 'demo' } } },
      status: {
        capacity: { cpu: '2', memory: '4Gi' },
        conditions: [{ type: 'OpenStackAuthenticationSucceeded', status: 'True', lastTransitionTime: T }],
      },
    },
    v1beta2: {
      apiVersion: `${G}/v1beta2`,
      kind: 'OpenStackMachineTemplate',
      metadata: meta('demo-control-plane'),
      spec: { template: { spec: { flavor: { id: '3' }, image, sshKeyName: 'demo' } } },
      status: {
        capacity: { cpu: '2', memory: '4Gi' },
        conditions: [{ type: 'OpenStackAuthenticationSucceeded', status: 'True', lastTransitionTime: T }],
      },
    },
  },
  {
    name: 'OpenStackCluster with every restructured field and a provisioned status',
    v1beta1: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackCluster',
      metadata: meta('demo'),
      spec: {
        identityRef,
        managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['10.0.0.2'] }],
        networkMTU: 1450,
        disablePortSecurity: false,
        externalRouterIPs: [{ fixedIP: '172.24.4.10', subnet: { filter: { name: 'public-v4' } } }],
        externalNetwork: { filter: { name: 'public' } },
        disableExternalNetwork: false,
        primarySubnet: { filter: { name: 'nodes' } },
        apiServerLoadBalancer: { enabled: true, additionalPorts: [8132], allowedCIDRs: ['10.0.0.0/8'] },
        disableAPIServerFloatingIP: false,
        apiServerFloatingIP: '172.24.4.20',
        apiServerFixedIP: '10.6.0.5',
        apiServerPort: 6443,
        managedSecurityGroups: {
          allowAllInClusterTraffic: false,
          allNodesSecurityGroupRules: [
            {
              name: 'BGP (calico)',
              direction: 'ingress',
              protocol: 'tcp',
              portRangeMin: 179,
              portRangeMax: 179,
              remoteManagedGroups: ['controlplane', 'worker'],
            },
          ],
        },
        bastion: { enabled: true, spec: { flavor: 'm1.small', image, sshKeyName: 'demo' } },
        controlPlaneEndpoint: { host: '172.24.4.20', port: 6443 },
        tags: ['demo'],
      },
      status: {
        ready: true,
        initialization: { provisioned: true },
        network: {
          name: 'k8s-clusterapi-cluster-capo-demo-demo',
          id: 'net-1',
          subnets: [{ name: 's', id: 'sub-1', cidr: '10.6.0.0/24' }],
        },
        apiServerLoadBalancer: { name: 'lb', id: 'lb-1', ip: '172.24.4.20', internalIP: '10.6.0.5' },
        failureDomains: {
          'az-1': { controlPlane: true },
          'az-2': { controlPlane: false, attributes: { rack: 'b' } },
        },
        bastion: {
          id: 'b-1',
          state: 'ACTIVE',
          resolved: { ports: [{ name: 'b-0', description: '', networkID: 'net-1' }] },
        },
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T }],
      },
    },
    v1beta2: {
      apiVersion: `${G}/v1beta2`,
      kind: 'OpenStackCluster',
      metadata: meta('demo'),
      spec: {
        identityRef,
        managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['10.0.0.2'] }],
        managedNetwork: { mtu: 1450, enablePortSecurity: true },
        managedRouter: {
          externalIPs: [{ fixedIP: '172.24.4.10', subnet: { filter: { name: 'public-v4' } } }],
        },
        externalNetwork: { filter: { name: 'public' } },
        enableExternalNetwork: true,
        primarySubnet: { filter: { name: 'nodes' } },
        apiServer: {
          managedLoadBalancer: { enabled: true, additionalPorts: [8132], allowedCIDRs: ['10.0.0.0/8'] },
          enableFloatingIP: true,
          floatingIP: '172.24.4.20',
          fixedIP: '10.6.0.5',
          port: 6443,
        },
        managedSecurityGroups: {
          allowAllInClusterTraffic: false,
          clusterNodesSecurityGroupRules: [
            {
              name: 'BGP (calico)',
              direction: 'ingress',
              protocol: 'tcp',
              portRangeMin: 179,
              portRangeMax: 179,
              remoteManagedGroups: ['controlplane', 'worker'],
            },
          ],
        },
        bastion: {
          enabled: true,
          spec: { flavor: { filter: { name: 'm1.small' } }, image, sshKeyName: 'demo' },
        },
        controlPlaneEndpoint: { host: '172.24.4.20', port: 6443 },
        tags: ['demo'],
      },
      status: {
        initialization: { provisioned: true },
        network: {
          name: 'k8s-clusterapi-cluster-capo-demo-demo',
          id: 'net-1',
          subnets: [{ name: 's', id: 'sub-1', cidr: '10.6.0.0/24' }],
        },
        apiServerManagedLoadBalancer: { name: 'lb', id: 'lb-1', ip: '172.24.4.20', internalIP: '10.6.0.5' },
        failureDomains: [
          { name: 'az-1', controlPlane: true },
          { name: 'az-2', controlPlane: false, attributes: { rack: 'b' } },
        ],
        bastion: {
          id: 'b-1',
          state: 'ACTIVE',
          resolved: { ports: [{ name: 'b-0', description: '', networkID: 'net-1' }] },
        },
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T }],
      },
    },
  },
  {
    name: 'OpenStackClusterTemplate (ClusterClass) without a floating IP on the API',
    v1beta1: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackClusterTemplate',
      metadata: meta('dev-test-openstack-cluster'),
      spec: {
        template: {
          spec: {
            identityRef,
            apiServerLoadBalancer: { enabled: true },
            disableAPIServerFloatingIP: true,
            disableExternalNetwork: true,
            managedSecurityGroups: { allowAllInClusterTraffic: true },
            managedSubnets: [{ cidr: '10.6.0.0/24' }],
          },
        },
      },
    },
    v1beta2: {
      apiVersion: `${G}/v1beta2`,
      kind: 'OpenStackClusterTemplate',
      metadata: meta('dev-test-openstack-cluster'),
      spec: {
        template: {
          spec: {
            identityRef,
            apiServer: { managedLoadBalancer: { enabled: true }, enableFloatingIP: false },
            enableExternalNetwork: false,
            managedSecurityGroups: { allowAllInClusterTraffic: true },
            managedSubnets: [{ cidr: '10.6.0.0/24' }],
          },
        },
      },
    },
  },
];

/** v1beta1 objects with something v1beta2 cannot say; each must come back whole. */
export const ONLY_V1BETA1: { name: string; obj: Obj }[] = [
  {
    name: 'both flavor and flavorID (the ID wins; the name rides along)',
    obj: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackMachine',
      metadata: meta('m'),
      spec: { flavor: 'm1.small', flavorID: '2', image },
    },
  },
  {
    name: 'deprecated failure fields, a severity, and ready out of step with the Ready condition',
    obj: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackMachine',
      metadata: meta('m'),
      spec: { flavor: 'm1.small', image },
      status: {
        ready: true,
        failureReason: 'UpdateError',
        failureMessage: 'the server went to ERROR',
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            severity: 'Error',
            reason: 'InstanceStateError',
            lastTransitionTime: T,
          },
          {
            type: 'InstanceReady',
            status: 'False',
            severity: 'Warning',
            reason: 'InstanceNotReady',
            lastTransitionTime: T,
          },
        ],
      },
    },
  },
  {
    name: 'a status without ready, and an accepted spec with both flavor fields',
    obj: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackMachine',
      metadata: { name: 'm' },
      spec: { flavorID: '2', image },
      status: {
        acceptedSpec: { flavor: 'm1.small', flavorID: '2', image, ports: [{ disablePortSecurity: false }] },
        acceptedGeneration: 1,
      },
    },
  },
  {
    name: 'an empty externalRouterIPs, a bastion with both flavor fields',
    obj: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackCluster',
      metadata: meta('c'),
      spec: {
        identityRef,
        externalRouterIPs: [],
        bastion: { spec: { flavor: 'm1.small', flavorID: '2', image } },
      },
      status: {
        ready: false,
        failureDomains: {},
        conditions: [
          { type: 'Ready', status: 'False', severity: 'Info', reason: 'Waiting', lastTransitionTime: T },
        ],
      },
    },
  },
  {
    name: 'an OpenStackMachineTemplate condition with a severity',
    obj: {
      apiVersion: `${G}/v1beta1`,
      kind: 'OpenStackMachineTemplate',
      metadata: meta('t'),
      spec: { template: { spec: { flavor: 'm1.small', image } } },
      status: {
        conditions: [
          {
            type: 'OpenStackAuthenticationSucceeded',
            status: 'False',
            severity: 'Error',
            reason: 'OpenStackAuthenticationFailed',
            message: 'no',
            lastTransitionTime: T,
          },
        ],
      },
    },
  },
];

/** v1beta2 objects with something v1beta1 cannot say; each must come back whole. */
export const ONLY_V1BETA2: { name: string; obj: Obj }[] = [
  {
    name: 'empty apiServer and managedNetwork structs, failure domains out of name order',
    obj: {
      apiVersion: `${G}/v1beta2`,
      kind: 'OpenStackCluster',
      metadata: meta('c'),
      spec: { identityRef, apiServer: {}, managedNetwork: {} },
      status: {
        failureDomains: [{ name: 'zz' }, { name: 'aa', controlPlane: true }],
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            observedGeneration: 3,
            reason: 'Ready',
            message: '',
            lastTransitionTime: T,
          },
        ],
      },
    },
  },
  {
    name: 'a flavor param that names nothing',
    obj: {
      apiVersion: `${G}/v1beta2`,
      kind: 'OpenStackMachineTemplate',
      metadata: meta('t'),
      spec: { template: { spec: { flavor: {}, image } } },
    },
  },
  {
    name: 'a managedRouter without external IPs',
    obj: {
      apiVersion: `${G}/v1beta2`,
      kind: 'OpenStackClusterTemplate',
      metadata: meta('t'),
      spec: { template: { spec: { identityRef, managedRouter: {} } } },
    },
  },
];

const calicoRules = [
  {
    name: 'BGP (calico)',
    description: 'Created by cluster-api-provider-openstack - BGP (calico)',
    direction: 'ingress',
    etherType: 'IPv4',
    portRangeMin: 179,
    portRangeMax: 179,
    protocol: 'tcp',
    remoteManagedGroups: ['controlplane', 'worker'],
  },
  {
    name: 'IP-in-IP (calico)',
    description: 'Created by cluster-api-provider-openstack - IP-in-IP (calico)',
    direction: 'ingress',
    etherType: 'IPv4',
    protocol: '4',
    remoteManagedGroups: ['controlplane', 'worker'],
  },
];

/** v1beta2 objects in the shapes of CAPO's templates (variables substituted). */
export const TEMPLATE_SHAPES: Obj[] = [
  // cluster-template.yaml (default): a load balancer, managed subnet, calico rules.
  {
    apiVersion: `${G}/v1beta2`,
    kind: 'OpenStackCluster',
    metadata: { name: 'demo', namespace: 'default' },
    spec: {
      identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' },
      apiServer: { managedLoadBalancer: { enabled: true } },
      externalNetwork: { id: '6b0e7d7c-3c36-4ab1-9e6d-0c4f3b2d8a11' },
      managedSecurityGroups: { allowAllInClusterTraffic: false, clusterNodesSecurityGroupRules: calicoRules },
      managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
    },
  },
  // cluster-template-without-lb.yaml: no load balancer; the API on a floating IP.
  {
    apiVersion: `${G}/v1beta2`,
    kind: 'OpenStackCluster',
    metadata: { name: 'demo', namespace: 'default' },
    spec: {
      identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' },
      apiServer: { floatingIP: '172.24.4.20' },
      externalNetwork: { id: '6b0e7d7c-3c36-4ab1-9e6d-0c4f3b2d8a11' },
      managedSecurityGroups: { allowAllInClusterTraffic: false, clusterNodesSecurityGroupRules: calicoRules },
      managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
    },
  },
  // the control plane and worker templates of every flavor.
  {
    apiVersion: `${G}/v1beta2`,
    kind: 'OpenStackMachineTemplate',
    metadata: { name: 'demo-control-plane', namespace: 'default' },
    spec: {
      template: {
        spec: {
          flavor: { filter: { name: 'm1.medium' } },
          image: { filter: { name: 'ubuntu-2404-kube-v1.32.4' } },
          sshKeyName: 'demo',
        },
      },
    },
  },
  // cluster-template-flatcar.yaml: Ignition through a config drive, a root volume.
  {
    apiVersion: `${G}/v1beta2`,
    kind: 'OpenStackMachineTemplate',
    metadata: { name: 'demo-md-0', namespace: 'default' },
    spec: {
      template: {
        spec: {
          flavor: { filter: { name: 'm1.medium' } },
          image: { filter: { name: 'flatcar-stable-4152.2.3-kube-v1.32.4' } },
          sshKeyName: 'demo',
          configDrive: true,
          rootVolume: { sizeGiB: 25, type: '__DEFAULT__' },
          additionalBlockDevices: [{ name: 'etcd', sizeGiB: 10, storage: { type: 'Volume' } }],
          ports: [
            {
              network: { filter: { name: 'nodes' } },
              fixedIPs: [{ subnet: { filter: { name: 'nodes-v4' } } }],
              enablePortSecurity: true,
            },
          ],
        },
      },
    },
  },
  // clusterclass-dev-test.yaml: the ClusterClass's OpenStackClusterTemplate, with a bastion.
  {
    apiVersion: `${G}/v1beta2`,
    kind: 'OpenStackClusterTemplate',
    metadata: { name: 'dev-test-openstack-cluster', namespace: 'default' },
    spec: {
      template: {
        spec: {
          identityRef: { name: 'dev-test-cloud-config', cloudName: 'openstack' },
          apiServer: { managedLoadBalancer: { enabled: true } },
          externalNetwork: { filter: { name: 'public' } },
          managedSecurityGroups: { allowAllInClusterTraffic: true },
          managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
          bastion: {
            enabled: true,
            spec: {
              flavor: { filter: { name: 'm1.small' } },
              image: { filter: { name: 'ubuntu-2404' } },
              sshKeyName: 'demo',
            },
          },
        },
      },
    },
  },
];
