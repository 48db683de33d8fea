import type { V1Service } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOAD_BALANCER_DEFAULTS } from './config/load-balancer.ts';
import type { LoadBalancerClass, LoadBalancerOptions } from './config/types.ts';
import { parseService, wantsLoadBalancer, type ServiceConfigOptions } from './service-config.ts';
import { Annotation } from './service/annotations.ts';
import type { LoadBalancerSpec, ServiceProblem } from './service/types.ts';

function service(
  annotations: Record<string, string> = {},
  spec: NonNullable<V1Service['spec']> = {},
): V1Service {
  return {
    metadata: { namespace: 'shop', name: 'web', uid: '6f1c4c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b', annotations },
    spec: {
      type: 'LoadBalancer',
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 },
        { name: 'dns', protocol: 'UDP', port: 53, nodePort: 30053 },
      ],
      ipFamilies: ['IPv4'],
      ...spec,
    },
  };
}

function config(
  lb: Partial<LoadBalancerOptions> = {},
  classes: LoadBalancerClass[] = [],
): ServiceConfigOptions {
  return {
    loadBalancer: { ...LOAD_BALANCER_DEFAULTS, ...lb },
    loadBalancerClasses: new Map(classes.map((c) => [c.name, c])),
  };
}

function specOf(svc: V1Service, cfg = config()): { spec: LoadBalancerSpec; problems: ServiceProblem[] } {
  const { spec, problems } = parseService(svc, cfg);
  assert.ok(spec, `fatal problems: ${JSON.stringify(problems)}`);
  return { spec, problems };
}

function fatalOf(svc: V1Service, cfg = config()): ServiceProblem {
  const { spec, problems } = parseService(svc, cfg);
  assert.equal(spec, undefined);
  const p = problems.find((q) => q.fatal);
  assert.ok(p);
  assert.equal(p.reason, 'SyncLoadBalancerFailed');
  return p;
}

describe('parseService', () => {
  it('gives OCCM defaults for a plain Service, one listener per port', () => {
    const { spec, problems } = specOf(service());
    assert.deepEqual(problems, []);
    assert.deepEqual(spec, {
      service: { namespace: 'shop', name: 'web', uid: '6f1c4c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b' },
      internal: false,
      provider: 'amphora',
      vip: {},
      keepFloatingIp: false,
      listeners: [
        {
          index: 0,
          portName: 'http',
          protocol: 'TCP',
          port: 80,
          nodePort: 30080,
          listenerProtocol: 'TCP',
          poolProtocol: 'TCP',
          monitorType: 'TCP',
        },
        {
          index: 1,
          portName: 'dns',
          protocol: 'UDP',
          port: 53,
          nodePort: 30053,
          listenerProtocol: 'UDP',
          poolProtocol: 'UDP',
          monitorType: 'UDP-CONNECT',
        },
      ],
      connectionLimit: -1,
      lbMethod: 'ROUND_ROBIN',
      xForwardedFor: false,
      timeouts: { clientData: 50000, memberConnect: 5000, memberData: 50000, tcpInspect: 0 },
      timeoutsSet: false,
      sourceRanges: ['0.0.0.0/0'],
      sourceRangesSet: false,
      monitor: { enabled: false, delay: 5, timeout: 3, maxRetries: 1, maxRetriesDown: 3 },
      nodeSelector: new Map(),
      origins: { provider: 'cloud.conf [LoadBalancer] lb-provider' },
      ipFamily: 'IPv4',
      floatingIp: {},
    });
  });

  it('reads every annotation', () => {
    const { spec, problems } = specOf(
      service(
        {
          [Annotation.ConnectionLimit]: '1000',
          [Annotation.KeepFloatingIp]: 'true',
          [Annotation.LbMethod]: 'SOURCE_IP',
          [Annotation.TimeoutClientData]: '60000',
          [Annotation.TimeoutMemberConnect]: '1000',
          [Annotation.TimeoutMemberData]: '60000',
          [Annotation.TimeoutTcpInspect]: '10',
          [Annotation.FlavorId]: 'big',
          [Annotation.AvailabilityZone]: 'az2',
          [Annotation.EnableHealthMonitor]: 'true',
          [Annotation.HealthMonitorDelay]: '7',
          [Annotation.HealthMonitorTimeout]: '4',
          [Annotation.HealthMonitorMaxRetries]: '2',
          [Annotation.HealthMonitorMaxRetriesDown]: '5',
          [Annotation.Hostname]: 'web.example.com',
          [Annotation.LoadBalancerId]: 'lb-1',
          [Annotation.NodeSelector]: 'role=edge,gpu',
          [Annotation.PortId]: 'vip-port',
          [Annotation.ProxyProtocol]: 'v2',
          [Annotation.SourceRanges]: '10.0.0.0/8 192.168.0.1/16',
        },
        { sessionAffinity: 'ClientIP' },
      ),
    );
    assert.deepEqual(problems, []);
    assert.equal(spec.connectionLimit, 1000);
    assert.equal(spec.keepFloatingIp, true);
    assert.equal(spec.lbMethod, 'SOURCE_IP');
    assert.deepEqual(spec.timeouts, {
      clientData: 60000,
      memberConnect: 1000,
      memberData: 60000,
      tcpInspect: 10,
    });
    assert.equal(spec.timeoutsSet, true);
    assert.equal(spec.flavorId, 'big');
    assert.equal(spec.availabilityZone, 'az2');
    assert.deepEqual(spec.monitor, { enabled: true, delay: 7, timeout: 4, maxRetries: 2, maxRetriesDown: 5 });
    assert.equal(spec.hostname, 'web.example.com');
    assert.equal(spec.loadBalancerId, 'lb-1');
    assert.deepEqual(
      spec.nodeSelector,
      new Map([
        ['role', 'edge'],
        ['gpu', ''],
      ]),
    );
    assert.deepEqual(spec.vip, { portId: 'vip-port' });
    assert.equal(spec.proxyProtocol, 'PROXYV2');
    assert.deepEqual(
      spec.listeners.map((l) => l.poolProtocol),
      ['PROXYV2', 'PROXYV2'],
    );
    assert.deepEqual(spec.sourceRanges, ['10.0.0.0/8', '192.168.0.0/16']);
    assert.equal(spec.sourceRangesSet, true);
    assert.equal(spec.sessionPersistence, 'SOURCE_IP');
  });

  it('prefers spec.loadBalancerSourceRanges to the annotation, and allow-all follows the family', () => {
    const fromSpec = specOf(
      service(
        { [Annotation.SourceRanges]: '10.0.0.0/8' },
        { loadBalancerSourceRanges: ['203.0.113.0/24', '203.0.113.9/24'] },
      ),
    );
    assert.deepEqual(fromSpec.spec.sourceRanges, ['203.0.113.0/24']);
    const v6 = specOf(service({}, { ipFamilies: ['IPv6', 'IPv4'] }));
    assert.deepEqual(v6.spec.sourceRanges, ['::/0']);
    assert.equal(v6.spec.ipFamily, 'IPv6');
  });

  it('makes the Service internal by annotation, or always with internal-lb', () => {
    const byAnnotation = specOf(service({ [Annotation.Internal]: 'true' }, { loadBalancerIP: '10.0.0.50' }));
    assert.equal(byAnnotation.spec.internal, true);
    assert.equal(byAnnotation.spec.floatingIp, undefined);
    assert.deepEqual(byAnnotation.spec.vip, { address: '10.0.0.50' });

    const forced = specOf(service({ [Annotation.Internal]: 'false' }), config({ internalLb: true }));
    assert.equal(forced.spec.internal, true);
    assert.deepEqual(
      forced.problems.map((p) => [p.reason, p.field, p.fatal]),
      [['LoadBalancerOptionIgnored', `metadata.annotations['${Annotation.Internal}']`, false]],
    );
  });

  it('takes loadBalancerIP as the floating IP for an external IPv4 Service and as the VIP for IPv6', () => {
    assert.deepEqual(specOf(service({}, { loadBalancerIP: '172.24.4.99' })).spec.floatingIp, {
      address: '172.24.4.99',
    });
    const v6 = specOf(service({}, { ipFamilies: ['IPv6'], loadBalancerIP: '2001:db8::99' })).spec;
    assert.deepEqual(v6.vip, { address: '2001:db8::99' });
    assert.deepEqual(v6.floatingIp, {});
  });

  describe('network precedence', () => {
    const classes: LoadBalancerClass[] = [
      {
        name: 'edge',
        floatingNetworkId: 'class-fip-net',
        floatingSubnet: 'edge-*',
        subnetId: 'class-vip-subnet',
        networkId: 'class-vip-net',
        memberSubnetId: 'class-member-subnet',
      },
      { name: 'bare' },
    ];
    const cfg = config(
      {
        floatingNetworkId: 'conf-fip-net',
        floatingSubnetId: 'conf-fip-subnet',
        subnetId: 'conf-vip-subnet',
        networkId: 'conf-vip-net',
      },
      classes,
    );

    it('floating network and subnet: class, then annotation, then cloud.conf', () => {
      const all = {
        [Annotation.Class]: 'edge',
        [Annotation.FloatingNetworkId]: 'ann-fip-net',
        [Annotation.FloatingSubnetId]: 'ann-fip-subnet',
      };
      const byClass = specOf(service(all), cfg).spec.floatingIp!;
      assert.equal(byClass.networkId, 'class-fip-net');
      assert.equal(byClass.subnet?.kind, 'match');

      const byAnnotation = specOf(service({ ...all, [Annotation.Class]: 'bare' }), cfg).spec.floatingIp!;
      assert.deepEqual(byAnnotation, {
        networkId: 'ann-fip-net',
        subnet: { kind: 'id', subnetId: 'ann-fip-subnet' },
      });

      const byConfig = specOf(service(), cfg).spec.floatingIp!;
      assert.deepEqual(byConfig, {
        networkId: 'conf-fip-net',
        subnet: { kind: 'id', subnetId: 'conf-fip-subnet' },
      });

      // A present but empty annotation wins over cloud.conf: the network is autodetected.
      const empty = specOf(service({ [Annotation.FloatingNetworkId]: '' }), cfg).spec.floatingIp!;
      assert.equal(empty.networkId, undefined);
    });

    it('floating subnet by pattern and tags when no id is given', () => {
      const { floatingIp } = specOf(
        service({
          [Annotation.FloatingSubnet]: '!~^internal-.*',
          [Annotation.FloatingSubnetTags]: '&fip,public',
        }),
      ).spec;
      const subnet = floatingIp!.subnet;
      assert.equal(subnet?.kind, 'match');
      assert.ok(subnet.kind === 'match' && subnet.name?.negate === true && subnet.tags?.all === true);
    });

    it('VIP: annotation over class over cloud.conf, except that an external Service takes the class first', () => {
      const ann = {
        [Annotation.Class]: 'edge',
        [Annotation.SubnetId]: 'ann-vip-subnet',
        [Annotation.NetworkId]: 'ann-vip-net',
      };
      assert.deepEqual(specOf(service(ann), cfg).spec.vip, {
        subnetId: 'class-vip-subnet',
        networkId: 'class-vip-net',
      });
      assert.deepEqual(specOf(service({ ...ann, [Annotation.Internal]: 'true' }), cfg).spec.vip, {
        subnetId: 'ann-vip-subnet',
        networkId: 'ann-vip-net',
      });
      assert.deepEqual(
        specOf(service({ [Annotation.Class]: 'edge', [Annotation.Internal]: 'true' }), cfg).spec.vip,
        {
          subnetId: 'class-vip-subnet',
          networkId: 'class-vip-net',
        },
      );
      assert.deepEqual(specOf(service(), cfg).spec.vip, {
        subnetId: 'conf-vip-subnet',
        networkId: 'conf-vip-net',
      });
    });

    it('members: member-subnet-id (annotation, class, cloud.conf), else [LoadBalancer] subnet-id, else the VIP subnet', () => {
      assert.equal(
        specOf(service({ [Annotation.MemberSubnetId]: 'ann-member', [Annotation.Class]: 'edge' }), cfg).spec
          .memberSubnetId,
        'ann-member',
      );
      assert.equal(
        specOf(service({ [Annotation.Class]: 'edge' }), cfg).spec.memberSubnetId,
        'class-member-subnet',
      );
      // OCCM's quirk: [LoadBalancer] subnet-id beats the subnet-id annotation for members.
      assert.equal(
        specOf(service({ [Annotation.SubnetId]: 'ann-vip' }), cfg).spec.memberSubnetId,
        'conf-vip-subnet',
      );
      assert.equal(specOf(service({ [Annotation.SubnetId]: 'ann-vip' })).spec.memberSubnetId, 'ann-vip');
      assert.equal(specOf(service()).spec.memberSubnetId, undefined, 'autodetected');
    });
  });

  it('records where each value the cloud may refuse came from', () => {
    const cls: LoadBalancerClass = { name: 'public', floatingNetworkId: 'net-from-class' };
    const { spec } = specOf(
      service({ [Annotation.FlavorId]: 'f-1', [Annotation.SubnetId]: 'sub-1', [Annotation.Class]: 'public' }),
      config({ availabilityZone: 'az1', floatingSubnetId: 'fsub-1' }, [cls]),
    );
    assert.deepEqual(spec.origins, {
      'vip.subnetId': `annotation ${Annotation.SubnetId}`,
      flavorId: `annotation ${Annotation.FlavorId}`,
      availabilityZone: 'cloud.conf [LoadBalancer] availability-zone',
      provider: 'cloud.conf [LoadBalancer] lb-provider',
      'floatingIp.networkId': 'cloud.conf [LoadBalancerClass "public"] floating-network-id',
      'floatingIp.subnet': 'cloud.conf [LoadBalancer] floating-subnet-id',
    });
  });

  it('derives listener and pool protocols from TLS and X-Forwarded-For as OCCM', () => {
    const tls = specOf(
      service({ [Annotation.TlsContainerRef]: 'https://kmip/v1/containers/9d4c' }),
    ).spec.listeners.map((l) => [l.listenerProtocol, l.poolProtocol]);
    assert.deepEqual(tls, [
      ['TERMINATED_HTTPS', 'HTTP'],
      ['TERMINATED_HTTPS', 'HTTP'],
    ]);
    const xff = specOf(service({ [Annotation.XForwardedFor]: 'true' })).spec.listeners.map((l) => [
      l.listenerProtocol,
      l.poolProtocol,
    ]);
    assert.deepEqual(xff, [
      ['HTTP', 'HTTP'],
      ['HTTP', 'HTTP'],
    ]);
  });

  it('asks for an HTTP monitor on the health check node port for ETP=Local with monitors on', () => {
    const local = { externalTrafficPolicy: 'Local', healthCheckNodePort: 32100 };
    const on = specOf(service({}, local), config({ createMonitor: true })).spec;
    assert.equal(on.monitor.healthCheckNodePort, 32100);
    assert.deepEqual(
      on.listeners.map((l) => l.monitorType),
      ['HTTP', 'HTTP'],
    );

    const off = parseService(service({}, local), config());
    assert.deepEqual(
      off.problems.map((p) => [p.reason, p.field, p.fatal]),
      [['LoadBalancerLocalTrafficWithoutMonitor', 'spec.externalTrafficPolicy', false]],
    );
    assert.equal(off.spec?.monitor.healthCheckNodePort, undefined);
  });

  it('keeps ports without a NodePort (allocateLoadBalancerNodePorts: false) with nodePort 0', () => {
    const { spec } = specOf(service({}, { ports: [{ protocol: 'SCTP', port: 3868 }] }));
    assert.deepEqual(spec.listeners, [
      {
        index: 0,
        protocol: 'SCTP',
        port: 3868,
        nodePort: 0,
        listenerProtocol: 'SCTP',
        poolProtocol: 'SCTP',
        monitorType: 'SCTP',
      },
    ]);
  });

  it('falls back to the default for unreadable values, with a problem naming the annotation', () => {
    const { spec, problems } = specOf(
      service({
        [Annotation.KeepFloatingIp]: 'yes',
        [Annotation.ConnectionLimit]: 'lots',
        [Annotation.HealthMonitorMaxRetries]: '11',
        [Annotation.TimeoutClientData]: '-5',
        [Annotation.ProxyProtocol]: 'v3',
        [Annotation.LbMethod]: 'FASTEST',
        'loadbalancer.openstack.org/keep-floating-ip': 'true',
      }),
      config({ monitorMaxRetries: 4 }),
    );
    assert.equal(spec.keepFloatingIp, false);
    assert.equal(spec.connectionLimit, -1);
    assert.equal(spec.monitor.maxRetries, 4);
    assert.equal(spec.timeouts.clientData, 50000);
    assert.equal(spec.proxyProtocol, undefined);
    assert.equal(spec.lbMethod, 'ROUND_ROBIN');
    const byField = Object.fromEntries(problems.map((p) => [p.field, p]));
    const field = (name: string) => `metadata.annotations['${name}']`;
    assert.match(
      byField[field('loadbalancer.openstack.org/keep-floating-ip')]!.message,
      /did you mean loadbalancer.openstack.org\/keep-floatingip/,
    );
    assert.match(
      byField[field(Annotation.KeepFloatingIp)]!.message,
      /"yes" is not "true" or "false"; using false/,
    );
    assert.match(byField[field(Annotation.ConnectionLimit)]!.message, /not a whole number; using -1/);
    assert.match(byField[field(Annotation.HealthMonitorMaxRetries)]!.message, /between 1 and 10; using 4/);
    assert.match(byField[field(Annotation.TimeoutClientData)]!.message, /at least 0/);
    assert.match(byField[field(Annotation.ProxyProtocol)]!.message, /"v3"/);
    assert.equal(byField[field(Annotation.LbMethod)]!.reason, 'LoadBalancerLbMethodUnknown');
    assert.ok(problems.every((p) => !p.fatal));
    assert.equal(problems.length, 7);
  });

  it('refuses what OCCM fails the sync for, naming the field', () => {
    assert.equal(fatalOf(service({}, { ports: [] })).field, 'spec.ports');
    const cls = fatalOf(service({ [Annotation.Class]: 'gold' }), config({}, [{ name: 'silver' }]));
    assert.equal(cls.field, `metadata.annotations['${Annotation.Class}']`);
    assert.match(cls.message, /invalid loadbalancer class "gold" \(cloud.conf defines "silver"\)/);
    const both = fatalOf(service({ [Annotation.ProxyProtocol]: 'true', [Annotation.XForwardedFor]: 'true' }));
    assert.match(both.message, /cannot be used together/);
    const ranges = fatalOf(service({}, { loadBalancerSourceRanges: ['10.0.0.0/8', 'office'] }));
    assert.equal(ranges.field, 'spec.loadBalancerSourceRanges');
    assert.match(ranges.message, /"office" is not a CIDR/);
    const tls = fatalOf(service({ [Annotation.TlsContainerRef]: 'https://kmip/v1/orders/1' }));
    assert.match(tls.message, /tlsContainerRef type orders unknown/);
    const regex = fatalOf(service({ [Annotation.FloatingSubnet]: '~(' }));
    assert.equal(regex.field, `metadata.annotations['${Annotation.FloatingSubnet}']`);
  });

  it('leaves Services with a spec.loadBalancerClass to their own controller', () => {
    assert.ok(wantsLoadBalancer(service()));
    assert.ok(!wantsLoadBalancer(service({}, { loadBalancerClass: 'example.com/other' })));
    assert.ok(!wantsLoadBalancer(service({}, { type: 'NodePort' })));
  });
});
