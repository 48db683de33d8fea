/** A NetworkPolicy as KuryrNetworkPolicy rules: selectors, ipBlocks, named ports, the default rules. No cloud. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1NetworkPolicy, V1NetworkPolicySpec } from '@kubernetes/client-node';
import {
  POLICY_RULE_DESCRIPTION,
  policySelectsPod,
  policyTypes,
  translatePolicy,
  type PolicyNetworks,
  type PolicyPod,
  type PolicyRule,
  type PolicyWorld,
} from './rules.ts';

const pod = (
  namespace: string,
  name: string,
  ip: string | undefined,
  labels: Record<string, string>,
  ports: PolicyPod['ports'] = [],
): PolicyPod => ({
  namespace,
  name,
  ip,
  labels,
  ports,
});

const web1 = pod('a', 'web-1', '10.128.0.11', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]);
const web2 = pod('a', 'web-2', '10.128.0.12', { app: 'web' }, [
  { name: 'http', containerPort: 8081, protocol: 'TCP' },
]);
const db = pod('a', 'db', '10.128.0.13', { app: 'db' }, [{ name: 'sql', containerPort: 5432 }]);
const client = pod('b', 'client', '10.128.1.21', { app: 'client' });
const pending = pod('b', 'pending', undefined, { app: 'client' });
const api = pod('c', 'api', '10.128.2.31', { app: 'client' }, [{ name: 'http', containerPort: 9090 }]);

const world: PolicyWorld = {
  pods: [web1, web2, db, client, pending, api],
  namespaces: [
    { name: 'a', labels: { team: 'a' } },
    { name: 'b', labels: { team: 'b', env: 'prod' } },
    { name: 'c', labels: { team: 'c', env: 'prod' } },
  ],
  services: [
    {
      namespace: 'a',
      name: 'db',
      clusterIP: '172.30.0.10',
      selector: { app: 'db' },
      ports: [{ port: 5432, targetPort: 5432 }],
    },
    {
      namespace: 'a',
      name: 'web',
      clusterIP: '172.30.0.11',
      selector: { app: 'web' },
      ports: [{ port: 80, targetPort: 'http' }],
    },
    { namespace: 'a', name: 'headless', clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 5432 }] },
  ],
};

const networks: PolicyNetworks = {
  serviceSubnet: '172.30.0.0/16',
  workerSubnets: ['10.0.0.0/24'],
  podCidrs: ['10.128.0.0/14'],
};

const policy = (spec: V1NetworkPolicySpec, namespace = 'a'): V1NetworkPolicy => ({
  metadata: { name: 'np', namespace },
  spec,
});

/** A policy as the API sends it: `from`/`to`, as the typed models do not name them. */
const wire = (spec: object, namespace = 'a'): V1NetworkPolicy => policy(spec, namespace);

/** `dir proto ports remote` per rule, for short assertions. */
const brief = (rules: PolicyRule[]) =>
  rules.map((r) => {
    const s = r.sgRule;
    const ports = s.port_range_min === undefined ? '' : ` ${s.port_range_min}-${s.port_range_max}`;
    return `${s.ethertype} ${s.protocol ?? 'any'}${ports} ${s.remote_ip_prefix ?? '*'}`;
  });

const run = (p: V1NetworkPolicy, w: PolicyWorld = world, enforceSgRules = true) =>
  translatePolicy(p, w, networks, { enforceSgRules });

const DEFAULT_INGRESS = ['IPv4 any 172.30.0.0/16', 'IPv4 any 10.0.0.0/24'];
const OPEN = ['IPv4 any *', 'IPv6 any *'];

describe('NetworkPolicy → security group rules', () => {
  it('isolates ingress to the pods a podSelector names, on the port given; egress stays open', () => {
    const out = run(
      wire({
        podSelector: { matchLabels: { app: 'db' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { app: 'web' } } }],
            ports: [{ port: 5432, protocol: 'TCP' }],
          },
        ],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 tcp 5432-5432 10.128.0.11/32',
      'IPv4 tcp 5432-5432 10.128.0.12/32',
      ...DEFAULT_INGRESS,
    ]);
    assert.deepEqual(out.ingressSgRules[0], {
      sgRule: {
        ethertype: 'IPv4',
        direction: 'ingress',
        description: POLICY_RULE_DESCRIPTION,
        protocol: 'tcp',
        port_range_min: 5432,
        port_range_max: 5432,
        remote_ip_prefix: '10.128.0.11/32',
      },
      namespace: 'a',
    });
    assert.deepEqual(brief(out.egressSgRules), OPEN);
    assert.deepEqual(out.problems, []);
  });

  it('denies all ingress but the default rules when there is no ingress rule', () => {
    const out = run(wire({ podSelector: {}, policyTypes: ['Ingress'] }));
    assert.deepEqual(brief(out.ingressSgRules), DEFAULT_INGRESS);
    assert.deepEqual(
      out.ingressSgRules.map((r) => r.sgRule.direction),
      ['ingress', 'ingress'],
    );
  });

  it('opens ingress for an egress-only policy and isolates egress', () => {
    const out = run(wire({ podSelector: {}, policyTypes: ['Egress'] }));
    assert.deepEqual(brief(out.ingressSgRules), [...OPEN, ...DEFAULT_INGRESS]);
    assert.deepEqual(out.egressSgRules, []);
  });

  it('reads absent policyTypes as the API server defaults them', () => {
    assert.deepEqual(policyTypes(wire({ podSelector: {} })), ['ingress']);
    assert.deepEqual(policyTypes(wire({ podSelector: {}, egress: [] })), ['ingress', 'egress']);
    assert.deepEqual(brief(run(wire({ podSelector: {}, ingress: [{}] })).egressSgRules), OPEN);
  });

  it('opens a direction for every empty rule, not only the first', () => {
    const out = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'db' } } }] }, {}],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules), ['IPv4 any 10.128.0.13/32', ...OPEN, ...DEFAULT_INGRESS]);
  });

  it('allows a port from anywhere when a rule has ports and no peers', () => {
    const out = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ ports: [{ port: 443, protocol: 'TCP' }] }],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 tcp 443-443 *',
      'IPv6 tcp 443-443 *',
      ...DEFAULT_INGRESS,
    ]);
  });

  it('takes a port range from endPort and a whole protocol from a port without a number', () => {
    const out = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { app: 'db' } } }],
            ports: [{ port: 30000, endPort: 30100, protocol: 'UDP' }, { protocol: 'SCTP' }],
          },
        ],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules).slice(0, 2), [
      'IPv4 udp 30000-30100 10.128.0.13/32',
      'IPv4 sctp 10.128.0.13/32',
    ]);
  });

  it('makes a namespace its KuryrNetwork CIDR, or its pods when namespaces share the pod subnet', () => {
    const spec = {
      podSelector: {},
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { env: 'prod' } } }] }],
    };
    const shared = run(wire(spec));
    assert.deepEqual(
      brief(shared.ingressSgRules),
      ['IPv4 any 10.128.1.21/32', 'IPv4 any 10.128.2.31/32', ...DEFAULT_INGRESS],
      'a pod without an IP is no remote yet',
    );
    assert.deepEqual(
      shared.ingressSgRules.map((r) => r.namespace),
      ['b', 'c', undefined, undefined],
    );
    const own = run(wire(spec), {
      ...world,
      namespaces: world.namespaces.map((n) => ({ ...n, cidr: n.name === 'b' ? '10.129.1.0/24' : undefined })),
    });
    assert.deepEqual(brief(own.ingressSgRules), [
      'IPv4 any 10.129.1.0/24',
      'IPv4 any 10.128.2.31/32',
      ...DEFAULT_INGRESS,
    ]);
  });

  it("takes a podSelector alone as the policy's namespace and {} as all of its pods", () => {
    const out = run(
      wire({ podSelector: {}, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: {} }] }] }),
    );
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 any 10.128.0.13/32',
      'IPv4 any 10.128.0.11/32',
      'IPv4 any 10.128.0.12/32',
      ...DEFAULT_INGRESS,
    ]);
  });

  it('matches a podSelector in every namespace the namespaceSelector matches', () => {
    const out = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [
              {
                namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
                podSelector: { matchLabels: { app: 'client' } },
              },
            ],
          },
        ],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 any 10.128.1.21/32',
      'IPv4 any 10.128.2.31/32',
      ...DEFAULT_INGRESS,
    ]);
  });

  it('makes namespaceSelector {} the whole cluster: the pod CIDRs and the service subnet', () => {
    const out = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ port: 53, protocol: 'UDP' }] }],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 udp 53-53 10.128.0.0/14',
      'IPv4 udp 53-53 172.30.0.0/16',
      ...DEFAULT_INGRESS,
    ]);
    const pods = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ namespaceSelector: {}, podSelector: { matchLabels: { app: 'client' } } }] }],
      }),
    );
    assert.deepEqual(brief(pods.ingressSgRules), [
      'IPv4 any 10.128.1.21/32',
      'IPv4 any 10.128.2.31/32',
      ...DEFAULT_INGRESS,
    ]);
  });

  it('cuts every exception out of an ipBlock', () => {
    const out = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          { from: [{ ipBlock: { cidr: '192.168.0.0/24', except: ['192.168.0.0/26', '192.168.0.192/26'] } }] },
        ],
        egress: [{ to: [{ ipBlock: { cidr: '2001:db8::/32' } }], ports: [{ port: 443, protocol: 'TCP' }] }],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 any 192.168.0.64/26',
      'IPv4 any 192.168.0.128/26',
      ...DEFAULT_INGRESS,
    ]);
    assert.deepEqual(brief(out.egressSgRules), ['IPv6 tcp 443-443 2001:db8::/32']);
    const bad = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ ipBlock: { cidr: 'ten/8' } }] }],
      }),
    );
    assert.match(bad.problems.join('\n'), /ipBlock cidr "ten\/8" is not a CIDR/);
  });

  it('resolves an ingress named port against the container ports of the pods the policy selects', () => {
    const out = run(
      wire({
        podSelector: { matchLabels: { app: 'web' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { team: 'b' } } }],
            ports: [{ port: 'http', protocol: 'TCP' }],
          },
        ],
      }),
    );
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 tcp 8080-8080 10.128.1.21/32',
      'IPv4 tcp 8081-8081 10.128.1.21/32',
      ...DEFAULT_INGRESS,
    ]);
    assert.deepEqual(out.ingressSgRules[0]?.affectedPods, [{ podIP: '10.128.0.11', podNamespace: 'a' }]);
    assert.deepEqual(out.ingressSgRules[1]?.affectedPods, [{ podIP: '10.128.0.12', podNamespace: 'a' }]);
    const udp = run(
      wire({
        podSelector: { matchLabels: { app: 'web' } },
        policyTypes: ['Ingress'],
        ingress: [{ ports: [{ port: 'http', protocol: 'UDP' }] }],
      }),
    );
    assert.deepEqual(brief(udp.ingressSgRules), DEFAULT_INGRESS, 'a named port matches its protocol too');
  });

  it("resolves an egress named port against the peers' container ports, leaving out the policy's own pods", () => {
    const out = run(
      wire({
        podSelector: { matchLabels: { app: 'web' } },
        policyTypes: ['Egress'],
        egress: [
          { to: [{ namespaceSelector: {}, podSelector: {} }], ports: [{ port: 'http', protocol: 'TCP' }] },
          { to: [{ ipBlock: { cidr: '10.0.0.0/8' } }], ports: [{ port: 'http', protocol: 'TCP' }] },
        ],
      }),
    );
    // namespaceSelector {} with podSelector {} is every pod: the cluster's CIDRs, on the ports the pods name.
    assert.deepEqual(brief(out.egressSgRules), ['IPv4 tcp 9090-9090 10.128.0.0/14']);
    assert.deepEqual(out.egressSgRules[0]?.affectedPods, [{ podIP: '10.128.2.31', podNamespace: 'c' }]);
    assert.match(out.problems.join('\n'), /named port "http" is not supported/);
  });

  it('lets egress to pods reach the cluster IPs of their Services on the Service port', () => {
    const out = run(
      wire({
        podSelector: { matchLabels: { app: 'client' } },
        policyTypes: ['Egress'],
        egress: [
          { to: [{ podSelector: { matchLabels: { app: 'db' } } }], ports: [{ port: 5432, protocol: 'TCP' }] },
          {
            to: [{ podSelector: { matchLabels: { app: 'web' } } }],
            ports: [{ port: 'http', protocol: 'TCP' }],
          },
        ],
      }),
    );
    assert.deepEqual(brief(out.egressSgRules), [
      'IPv4 tcp 5432-5432 10.128.0.13/32',
      'IPv4 tcp 5432-5432 172.30.0.10/32',
      'IPv4 tcp 8080-8080 10.128.0.11/32',
      'IPv4 tcp 80-80 172.30.0.11/32',
      'IPv4 tcp 8081-8081 10.128.0.12/32',
    ]);
    const whole = run(
      wire({
        podSelector: {},
        policyTypes: ['Egress'],
        egress: [{ to: [{ namespaceSelector: { matchLabels: { team: 'a' } } }] }],
      }),
      {
        ...world,
        namespaces: world.namespaces.map((n) => ({
          ...n,
          cidr: n.name === 'a' ? '10.129.0.0/24' : undefined,
        })),
      },
    );
    assert.deepEqual(
      brief(whole.egressSgRules),
      ['IPv4 any 10.129.0.0/24', 'IPv4 any 172.30.0.10/32', 'IPv4 any 172.30.0.11/32'],
      'a headless Service has no VIP',
    );
  });

  it('opens ingress from the namespace’s Service IPs instead of the service subnet when SG rules are not enforced', () => {
    const out = run(wire({ podSelector: {}, policyTypes: ['Ingress'] }), world, false);
    assert.deepEqual(brief(out.ingressSgRules), [
      'IPv4 any 10.0.0.0/24',
      'IPv4 any 172.30.0.10/32',
      'IPv4 any 172.30.0.11/32',
    ]);
    assert.equal(out.ingressSgRules[1]?.sgRule.description, 'Allow traffic from local namespace service db');
  });

  it('gives IPv6 pods IPv6 rules of one host', () => {
    const v6 = pod('a', 'v6', 'fd00::5', { app: 'v6' });
    const out = run(
      wire({
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'v6' } } }] }],
      }),
      {
        ...world,
        pods: [...world.pods, v6],
      },
    );
    assert.deepEqual(brief(out.ingressSgRules)[0], 'IPv6 any fd00::5/128');
  });

  it('gives the same rules whatever order the cluster is listed in, each rule once', () => {
    const spec = {
      podSelector: {},
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { app: 'web' } } }, { podSelector: {} }],
          ports: [{ port: 80, protocol: 'TCP' }],
        },
      ],
    };
    const a = run(wire(spec));
    const b = run(wire(spec), {
      ...world,
      pods: [...world.pods].reverse(),
      namespaces: [...world.namespaces].reverse(),
    });
    assert.deepEqual(a, b);
    assert.equal(new Set(brief(a.ingressSgRules)).size, a.ingressSgRules.length);
  });

  it('selects the pods of its namespace its podSelector matches', () => {
    const p = policy({ podSelector: { matchLabels: { app: 'web' } } });
    assert.ok(policySelectsPod(p, web1));
    assert.ok(!policySelectsPod(p, db));
    assert.ok(!policySelectsPod(p, { ...web1, namespace: 'b' }));
    assert.ok(policySelectsPod(policy({ podSelector: {} }), db));
  });
});
