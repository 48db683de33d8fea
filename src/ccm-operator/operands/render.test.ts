/**
 * renderOperands for every platform: what upstream's operator guarantees of every operand (its
 * cloud_test.go checks: the pods start before the network plugin, leader election, the trusted CA,
 * selector labels, anti-affinity, Recreate, replicas), then what each platform's CCM needs (name,
 * image, flags, mounts), and our inventory label.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  KubernetesObject,
  V1DaemonSet,
  V1Deployment,
  V1PodDisruptionBudget,
  V1Toleration,
} from '@kubernetes/client-node';
import {
  CCM_PROVIDER_LABEL,
  CNM_PROVIDER_LABEL,
  DEFAULT_IMAGES,
  IMAGE_KEYS,
  OPERAND_LABEL,
  OPERAND_PLATFORMS,
  OperandRenderError,
  renderOperands,
  SHARED_OPERAND,
  type OperandPlatform,
} from './index.ts';
import { ccmOf, commandLine, find, podOf, renderInput, workloads } from './testing/input.ts';

/** Upstream's Deployment names (CCCMO cloud_test.go's expectedResourcesKindName). */
const DEPLOYMENT: Record<OperandPlatform, string> = {
  OpenStack: 'openstack-cloud-controller-manager',
  AWS: 'aws-cloud-controller-manager',
  Azure: 'azure-cloud-controller-manager',
  GCP: 'gcp-cloud-controller-manager',
  VSphere: 'vsphere-cloud-controller-manager',
  IBMCloud: 'ibm-cloud-controller-manager',
  PowerVS: 'powervs-cloud-controller-manager',
  Nutanix: 'nutanix-cloud-controller-manager',
};

/** The images map key of each platform's CCM (OpenStack: shiftstack's, by default). */
const IMAGE_KEY: Record<OperandPlatform, string> = {
  OpenStack: 'shiftstack',
  AWS: 'cloudControllerManagerAWS',
  Azure: 'cloudControllerManagerAzure',
  GCP: 'cloudControllerManagerGCP',
  VSphere: 'cloudControllerManagerVSphere',
  IBMCloud: 'cloudControllerManagerIBM',
  PowerVS: 'cloudControllerManagerPowerVS',
  Nutanix: 'cloudControllerManagerNutanix',
};

/** One distinct image per key, so a test sees which key an image came from. */
const TAGGED = Object.fromEntries(IMAGE_KEYS.map((k) => [k, `registry.example/${k}:test`]));

const tolerates = (ts: V1Toleration[] | undefined, key: string | undefined, effect: string) =>
  (ts ?? []).some(
    (t) =>
      (t.key === key || (t.key === undefined && t.operator === 'Exists')) &&
      (!t.effect || t.effect === effect),
  );

/** Every string in an object, with its path. */
function strings(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => strings(v, path ? `${path}.${k}` : k));
  return [];
}

for (const platform of OPERAND_PLATFORMS) {
  describe(`${platform} operands`, () => {
    const { objects } = renderOperands(renderInput(platform, { images: TAGGED }));
    const deployment = find<V1Deployment>(objects, 'Deployment', DEPLOYMENT[platform]);

    it(`the Deployment is ${DEPLOYMENT[platform]} in the operands' namespace, running the ${IMAGE_KEY[platform]} image`, () => {
      assert.equal(deployment.metadata?.namespace, 'openshift-cloud-controller-manager');
      assert.equal(ccmOf(deployment).image, TAGGED[IMAGE_KEY[platform]]);
      assert.equal(podOf(deployment).serviceAccountName, 'cloud-controller-manager');
    });

    it('every pod starts before the network plugin: host network, uninitialized and not-ready Nodes tolerated, the CCM port declared', () => {
      for (const w of workloads(objects)) {
        const pod = podOf(w);
        assert.equal(pod.hostNetwork, true, w.metadata?.name);
        assert.ok(tolerates(pod.tolerations, 'node.cloudprovider.kubernetes.io/uninitialized', 'NoSchedule'));
        assert.ok(tolerates(pod.tolerations, 'node.kubernetes.io/not-ready', 'NoSchedule'));
        for (const c of pod.containers) {
          assert.ok(
            (c.ports ?? []).some((p) => p.containerPort === 10258 || p.containerPort === 10263),
            `${c.name}: a host-network process declares its registered port`,
          );
        }
      }
    });

    it('the CCM elects its leader on a Lease in the operands’ namespace', () => {
      const line = commandLine(ccmOf(deployment));
      assert.match(line, /--leader-elect=true/);
      assert.match(line, /--leader-elect-resource-namespace=openshift-cloud-controller-manager(\s|$)/);
      // Nutanix's asset leaves the timings to the framework.
      if (platform !== 'Nutanix') {
        for (const f of ['lease-duration=137s', 'renew-deadline=107s', 'retry-period=26s'])
          assert.match(line, new RegExp(`--leader-elect-${f}`));
      }
    });

    it('ccm-trusted-ca is mounted over the system trust bundle in every container', () => {
      for (const w of workloads(objects)) {
        const pod = podOf(w);
        const volume = pod.volumes?.find((v) => v.configMap?.name === 'ccm-trusted-ca');
        assert.deepEqual(volume?.configMap?.items, [{ key: 'ca-bundle.crt', path: 'tls-ca-bundle.pem' }]);
        for (const c of pod.containers) {
          assert.ok(
            c.volumeMounts?.some(
              (m) =>
                m.name === volume.name && m.mountPath === '/etc/pki/ca-trust/extracted/pem' && m.readOnly,
            ),
            `${w.metadata?.name}/${c.name}`,
          );
        }
      }
    });

    it('every mount names a volume of its pod, and every volume name is used once', () => {
      for (const w of workloads(objects)) {
        const pod = podOf(w);
        const names = (pod.volumes ?? []).map((v) => v.name);
        assert.equal(new Set(names).size, names.length, `${w.metadata?.name}: ${names.join(',')}`);
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])])
          for (const m of c.volumeMounts ?? [])
            assert.ok(names.includes(m.name), `${c.name} mounts ${m.name}`);
      }
    });

    it('Deployment, pods and selector carry k8s-app and the provider label; one pod per node; Recreate', () => {
      const labels = { 'k8s-app': DEPLOYMENT[platform], [CCM_PROVIDER_LABEL]: platform };
      assert.deepEqual(deployment.spec?.selector.matchLabels, labels);
      assert.deepEqual(deployment.spec?.template.metadata?.labels, labels);
      for (const [k, v] of Object.entries(labels)) assert.equal(deployment.metadata?.labels?.[k], v);
      assert.deepEqual(podOf(deployment).affinity?.podAntiAffinity, {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels } },
        ],
      });
      // The host port must be free before the new pod starts.
      assert.deepEqual(deployment.spec?.strategy, { type: 'Recreate' });
      assert.equal(podOf(deployment).priorityClassName, 'system-cluster-critical');
    });

    it('two replicas and a budget of one available pod; one replica and no budget on a single-replica topology', () => {
      assert.equal(deployment.spec?.replicas, 2);
      const pdb = find<V1PodDisruptionBudget>(
        objects,
        'PodDisruptionBudget',
        `${platform.toLowerCase()}-cloud-controller-manager`,
      );
      assert.equal(pdb.spec?.minAvailable, 1);
      assert.deepEqual(pdb.spec?.selector?.matchLabels, { [CCM_PROVIDER_LABEL]: platform });
      const single = renderOperands(renderInput(platform, { singleReplica: true })).objects;
      assert.equal(find<V1Deployment>(single, 'Deployment', DEPLOYMENT[platform]).spec?.replicas, 1);
      assert.equal(single.filter((o) => o.kind === 'PodDisruptionBudget').length, 0);
    });

    it('every object carries the inventory label: the platform, or shared for what every platform uses', () => {
      const shared = objects.filter((o) => o.metadata?.labels?.[OPERAND_LABEL] === SHARED_OPERAND);
      const own = objects.filter((o) => o.metadata?.labels?.[OPERAND_LABEL] === platform);
      assert.equal(shared.length + own.length, objects.length);
      assert.deepEqual(shared.map((o) => `${o.kind}/${o.metadata?.name}`).sort(), [
        'ClusterRole/cloud-controller-manager',
        'ClusterRole/cloud-node-manager',
        'ClusterRoleBinding/cloud-controller-manager',
        'ClusterRoleBinding/cloud-node-manager',
        'Namespace/openshift-cloud-controller-manager',
        'Role/cloud-controller-manager',
        'RoleBinding/cloud-controller-manager',
        'RoleBinding/cloud-controller-manager:apiserver-authentication-reader',
        'ServiceAccount/cloud-controller-manager',
        'ServiceAccount/cloud-node-manager',
      ]);
      assert.ok(own.some((o) => o.kind === 'Deployment'));
    });

    it('everything follows --namespace: objects, Lease, subjects, Secret lookups; only kube-system stays', () => {
      const ns = 'ccm-test';
      const moved = renderOperands(renderInput(platform, { namespace: ns })).objects;
      for (const o of moved) {
        if (o.kind === 'Namespace') assert.equal(o.metadata?.name, ns);
        else if (o.metadata?.namespace)
          assert.ok([ns, 'kube-system'].includes(o.metadata.namespace), `${o.kind}/${o.metadata.name}`);
        for (const [path, s] of strings(o)) {
          assert.ok(
            s !== 'openshift-cloud-controller-manager' &&
              !s.includes('=openshift-cloud-controller-manager') &&
              !s.includes(':openshift-cloud-controller-manager:'),
            `${o.kind}/${o.metadata?.name} ${path}: ${s}`,
          );
        }
      }
    });

    it('the cluster proxy reaches every container as HTTP_PROXY, HTTPS_PROXY and NO_PROXY; init containers as upstream leaves them', () => {
      const proxy = {
        httpProxy: 'http://proxy:3128',
        httpsProxy: 'http://proxy:3129',
        noProxy: '.cluster.local',
      };
      const withProxy = renderOperands(renderInput(platform, { proxy })).objects;
      for (const w of workloads(withProxy)) {
        for (const c of podOf(w).containers) {
          const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
          assert.equal(env.HTTP_PROXY, proxy.httpProxy, c.name);
          assert.equal(env.HTTPS_PROXY, proxy.httpsProxy, c.name);
          assert.equal(env.NO_PROXY, proxy.noProxy, c.name);
        }
        for (const c of podOf(w).initContainers ?? [])
          assert.ok(!c.env?.some((e) => e.name === 'HTTP_PROXY'));
      }
      const without = workloads(objects).flatMap((w) => podOf(w).containers);
      assert.ok(without.every((c) => !c.env?.some((e) => e.name.endsWith('_PROXY'))));
    });

    it('apply order: the namespace first, who may act before the workloads', () => {
      assert.equal(objects[0]?.kind, 'Namespace');
      const at = (pred: (o: KubernetesObject) => boolean) => objects.findIndex(pred);
      const firstWorkload = at((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet');
      const lastRbac = objects.findLastIndex((o) => /Role|ServiceAccount/.test(o.kind ?? ''));
      assert.ok(lastRbac < firstWorkload);
    });

    it('is pure: the same input renders the same objects, and changing a result changes no later one', () => {
      const a = renderOperands(renderInput(platform));
      a.objects[0]!.metadata!.name = 'changed';
      const b = renderOperands(renderInput(platform));
      const c = renderOperands(renderInput(platform));
      assert.deepEqual(b, c);
      assert.notEqual(b.objects[0]?.metadata?.name, 'changed');
    });

    it(`a missing ${IMAGE_KEY[platform]} image is an OperandRenderError naming the key`, () => {
      const images: Record<string, string> = { ...DEFAULT_IMAGES };
      delete images[IMAGE_KEY[platform]];
      assert.throws(
        () => renderOperands(renderInput(platform, { images })),
        (err: unknown) =>
          err instanceof OperandRenderError &&
          err.platform === platform &&
          err.key === IMAGE_KEY[platform] &&
          err.message.includes(`"${IMAGE_KEY[platform]}"`),
      );
    });
  });
}

describe('platform specifics', () => {
  it('OpenStack upstream: OCCM as CCCMO runs it, its image, and the RBAC of its kube-system client', () => {
    const { objects } = renderOperands(
      renderInput('OpenStack', {
        openstackCcm: 'upstream',
        images: TAGGED,
        featureGates: ['CloudDualStackNodeIPs'],
      }),
    );
    const d = find<V1Deployment>(objects, 'Deployment', 'openstack-cloud-controller-manager');
    const c = ccmOf(d);
    assert.equal(c.image, TAGGED.cloudControllerManagerOpenStack);
    assert.deepEqual(c.command?.slice(0, 2), ['/bin/bash', '-c']);
    const script = c.command?.[2] ?? '';
    assert.ok(
      script.startsWith(
        '#!/bin/bash\nset -o allexport\nif [[ -f /etc/kubernetes/apiserver-url.env ]]; then\n  source /etc/kubernetes/apiserver-url.env\nfi\nexec /usr/bin/openstack-cloud-controller-manager',
      ),
      script,
    );
    const flags = script
      .split('\n')
      .slice(6)
      .map((l) => l.replace(/\s*\\$/, '').trim())
      .filter(Boolean);
    assert.deepEqual(flags, [
      '--v=1',
      '--cloud-config=$(CLOUD_CONFIG)',
      '--cloud-provider=openstack',
      '--cluster-name=$(OCP_INFRASTRUCTURE_NAME)',
      '--use-service-account-credentials=true',
      '--configure-cloud-routes=false',
      '--bind-address=127.0.0.1',
      '--leader-elect=true',
      '--leader-elect-lease-duration=137s',
      '--leader-elect-renew-deadline=107s',
      '--leader-elect-retry-period=26s',
      '--leader-elect-resource-namespace=openshift-cloud-controller-manager',
      '--feature-gates=CloudDualStackNodeIPs=true',
      '--secure-port=0',
    ]);
    assert.deepEqual(c.env, [
      { name: 'CLOUD_CONFIG', value: '/etc/openstack/config/cloud.conf' },
      { name: 'OCP_INFRASTRUCTURE_NAME', value: 'mycluster-x7k2p' },
    ]);
    find(objects, 'ServiceAccount', 'cloud-controller-manager');
    const sa = objects.find((o) => o.kind === 'ServiceAccount' && o.metadata?.namespace === 'kube-system');
    assert.equal(sa?.metadata?.name, 'cloud-controller-manager');
    find(objects, 'ClusterRole', 'openstack-cloud-controller-manager');
    find(objects, 'ClusterRoleBinding', 'openstack-cloud-controller-manager');
  });

  it('OpenStack, both flavours: cloud-conf, the clouds.yaml Secret and the trusted CA at upstream’s paths', () => {
    for (const openstackCcm of ['shiftstack', 'upstream'] as const) {
      const d = find<V1Deployment>(
        renderOperands(renderInput('OpenStack', { openstackCcm })).objects,
        'Deployment',
        'openstack-cloud-controller-manager',
      );
      const pod = podOf(d);
      const mountOf = (pred: (v: NonNullable<typeof pod.volumes>[number]) => boolean) => {
        const v = pod.volumes!.find(pred)!;
        return ccmOf(d).volumeMounts!.find((m) => m.name === v.name)!;
      };
      const conf = pod.volumes!.find((v) => v.configMap?.name === 'cloud-conf')!;
      assert.deepEqual(conf.configMap?.items, [{ key: 'cloud.conf', path: 'cloud.conf' }]);
      assert.equal(mountOf((v) => v === conf).mountPath, '/etc/openstack/config');
      const secret = pod.volumes!.find((v) => v.secret?.secretName === 'openstack-cloud-credentials')!;
      assert.deepEqual(secret.secret?.items, [{ key: 'clouds.yaml', path: 'clouds.yaml' }]);
      // The transformed cloud.conf says clouds-file = /etc/openstack/secret/clouds.yaml.
      assert.equal(mountOf((v) => v === secret).mountPath, '/etc/openstack/secret');
      assert.equal(
        mountOf((v) => v.configMap?.name === 'ccm-trusted-ca').mountPath,
        '/etc/pki/ca-trust/extracted/pem',
      );
      assert.ok(ccmOf(d).volumeMounts!.every((m) => m.readOnly));
    }
  });

  it('OpenStack shiftstack: placement on control-plane nodes of kubeadm and OpenShift alike, hardened, no OCCM-only RBAC', () => {
    const { objects } = renderOperands(renderInput('OpenStack'));
    const d = find<V1Deployment>(objects, 'Deployment', 'openstack-cloud-controller-manager');
    const pod = podOf(d);
    assert.equal(pod.nodeSelector, undefined);
    const terms =
      pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    assert.deepEqual(
      terms?.map((t) => t.matchExpressions?.map((e) => `${e.key} ${e.operator}`)),
      [['node-role.kubernetes.io/control-plane Exists'], ['node-role.kubernetes.io/master Exists']],
    );
    for (const role of ['control-plane', 'master'])
      assert.ok(tolerates(pod.tolerations, `node-role.kubernetes.io/${role}`, 'NoSchedule'));
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    const sc = ccmOf(d).securityContext;
    assert.equal(sc?.allowPrivilegeEscalation, false);
    assert.equal(sc?.readOnlyRootFilesystem, true);
    assert.deepEqual(sc?.capabilities?.drop, ['ALL']);
    assert.ok(!objects.some((o) => o.metadata?.namespace === 'kube-system' && o.kind === 'ServiceAccount'));
    assert.ok(
      !objects.some(
        (o) => o.metadata?.name === 'openstack-cloud-controller-manager' && o.kind === 'ClusterRole',
      ),
    );
  });

  it('Azure: the node manager DaemonSet on every node, its ServiceAccount and image; the CCM leaves Nodes to it', () => {
    const { objects } = renderOperands(renderInput('Azure', { images: TAGGED }));
    const ds = find<V1DaemonSet>(objects, 'DaemonSet', 'azure-cloud-node-manager');
    assert.equal(ds.metadata?.namespace, 'openshift-cloud-controller-manager');
    assert.equal(ds.spec?.selector.matchLabels?.[CNM_PROVIDER_LABEL], 'Azure');
    const pod = podOf(ds);
    assert.equal(pod.serviceAccountName, 'cloud-node-manager');
    assert.equal(pod.priorityClassName, 'system-node-critical');
    assert.equal(pod.containers[0]?.image, TAGGED.cloudNodeManagerAzure);
    assert.equal(pod.initContainers?.[0]?.image, TAGGED.cloudControllerManagerOperator);
    assert.ok(tolerates(pod.tolerations, undefined, 'NoSchedule'), 'any NoSchedule taint');
    const ccm = ccmOf(find<V1Deployment>(objects, 'Deployment', 'azure-cloud-controller-manager'));
    assert.match(commandLine(ccm), /--controllers=\*,-cloud-node/);
    for (const kind of ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'])
      assert.equal(objects.filter((o) => o.kind === kind).length, 2, kind);
  });

  it('GCP: the TLS profile when the cluster has one, and no secure port', () => {
    const tls = { cipherSuites: 'TLS_AES_128_GCM_SHA256', minVersion: 'VersionTLS13' };
    const line = (over = {}) =>
      commandLine(
        ccmOf(
          find(
            renderOperands(renderInput('GCP', over)).objects,
            'Deployment',
            'gcp-cloud-controller-manager',
          ),
        ),
      );
    assert.match(
      line({ tls }),
      /--tls-cipher-suites=TLS_AES_128_GCM_SHA256 \\\n\s*--tls-min-version=VersionTLS13/,
    );
    assert.doesNotMatch(line(), /--tls-/);
    assert.match(line(), /--secure-port=0\n$/);
  });

  it('vSphere: the feature gates, and the credentials Secret looked up in the operands’ namespace', () => {
    const ns = 'ccm-test';
    const d = find<V1Deployment>(
      renderOperands(renderInput('VSphere', { namespace: ns, featureGates: ['A', 'B'] })).objects,
      'Deployment',
      'vsphere-cloud-controller-manager',
    );
    assert.match(commandLine(ccmOf(d)), /--feature-gates=A=true,B=true/);
    const env = Object.fromEntries((ccmOf(d).env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env.VSPHERE_SECRET_NAMESPACE, ns);
    assert.equal(env.VSPHERE_SECRET_NAME, 'vsphere-cloud-credentials');
  });

  it('IBM Cloud and Power VS: one binary, public endpoints on Power VS only, a liveness probe on the secure port', () => {
    for (const [platform, publicEndpoint] of [
      ['IBMCloud', 'false'],
      ['PowerVS', 'true'],
    ] as const) {
      const c = ccmOf(
        find(renderOperands(renderInput(platform)).objects, 'Deployment', DEPLOYMENT[platform]),
      );
      assert.match(commandLine(c), /exec \/bin\/ibm-cloud-controller-manager/);
      assert.equal(c.env?.find((e) => e.name === 'VPCCTL_PUBLIC_ENDPOINT')?.value, publicEndpoint);
      assert.deepEqual(c.livenessProbe?.httpGet, { path: '/healthz', port: 10258, scheme: 'HTTPS' });
    }
  });

  it('Nutanix: its JSON config from cloud-conf, the Prism credentials named in the environment', () => {
    const d = find<V1Deployment>(
      renderOperands(renderInput('Nutanix')).objects,
      'Deployment',
      'nutanix-cloud-controller-manager',
    );
    const volume = podOf(d).volumes?.find((v) => v.configMap?.name === 'cloud-conf');
    assert.deepEqual(volume?.configMap?.items, [{ key: 'cloud.conf', path: 'nutanix_config.json' }]);
    assert.match(commandLine(ccmOf(d)), /--cloud-config=\/etc\/cloud\/nutanix_config\.json/);
    assert.equal(ccmOf(d).env?.find((e) => e.name === 'NUTANIX_SECRET_NAME')?.value, 'nutanix-credentials');
  });
});
