/**
 * The in-tree stand-in in the CCM's end-to-end bed (src/ccm/testing/env.ts): a kube-controller-manager
 * built in-process against both emulators, Nodes as in-tree kubelets register them, and the two
 * OpenShift kinds of the CloudControllerOwner handshake for clusters that do not have them.
 */
import type { V1Node } from '@kubernetes/client-node';
import { createLogger, type Logger } from '../../../lib/log.ts';
import { createRegistry } from '../../../lib/metrics.ts';
import { kinds, type KubernetesObject } from '../../../kube/index.ts';
import { kubeConfigFrom } from '../../../kube/testing/env.ts';
import { gatherAddressSources, nodeAddresses } from '../../../ccm/node-addresses.ts';
import { providerId } from '../../../openstack/services/provider-id.ts';
import type { CcmEnv } from '../../../ccm/testing/env.ts';
import type { Server } from '../../../openstack/compute/v2/servers.ts';
import { buildInTreeKcm, KCM_DEFAULTS, type InTreeKcm, type InTreeKcmOptions } from '../kcm.ts';

export interface RunningKcm {
  kcm: InTreeKcm;
  /** Its leader-election identity (undefined without leader election). */
  identity: string | undefined;
  /** Graceful stop: work in flight ends, then the Leases are released. */
  stop(): Promise<void>;
  /** Settles when the process would exit (a lost Lease rejects it). */
  done: Promise<void>;
}

/** A stand-in against the bed's emulators; fast waits (× 0.01), no leader election unless asked. */
export async function startInTreeKcm(
  env: CcmEnv,
  opts: Partial<InTreeKcmOptions> = {},
  log: Logger = createLogger({ level: 'silent' }),
): Promise<RunningKcm> {
  const kcm = await buildInTreeKcm(
    {
      ...KCM_DEFAULTS,
      cloudProvider: 'openstack',
      cloudConfig: opts.cloudConfig ?? (await env.cloudConf()),
      leaderElect: false,
      timeScale: 0.01,
      nodeMonitorPeriodMs: 50,
      ...opts,
    },
    {
      log,
      loadContext: { env: {}, homedir: env.dir, cwd: env.dir },
      registry: createRegistry({ defaultMetrics: false }),
      kubeConfig: kubeConfigFrom(opts.kubeconfig ?? env.kube.kubeconfigPath),
    },
  );
  const stopper = new AbortController();
  const done = kcm.run(stopper.signal);
  // Nobody may miss a rejection of a process that is never stopped gracefully.
  done.catch(() => {});
  return {
    kcm,
    identity: kcm.manager.identity,
    done,
    async stop() {
      stopper.abort(new Error('test: stopped'));
      await done;
    },
  };
}

/**
 * A Node as a kubelet with `--cloud-provider=openstack` registers it: the providerID and the
 * addresses the in-tree provider reads from Nova and Neutron (the CCM's algorithm: upstream's last
 * in-tree release had the same order), plus its Hostname, Ready, and no uninitialized taint.
 */
export async function registerInTreeNode(env: CcmEnv, server: Server): Promise<V1Node> {
  const cloud = nodeAddresses(await gatherAddressSources(env.os.network, server), {
    ipv6SupportDisabled: false,
    publicNetworkNames: [],
    internalNetworkNames: [],
    addressSortOrder: [],
  });
  const now = new Date().toISOString();
  return env.api.create(kinds.Node, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: server.name, labels: { 'kubernetes.io/hostname': server.name } },
    spec: { providerID: providerId(server.id) },
    status: {
      addresses: [...cloud, { type: 'Hostname', address: server.name }],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: now as unknown as Date,
          lastTransitionTime: now as unknown as Date,
        },
      ],
    },
  });
}

/** A server of the bed's flavor and image on `networkId`, ACTIVE. */
export async function bootServer(env: CcmEnv, name: string, networkId: string): Promise<Server> {
  const s = await env.os.compute.servers.create({
    name,
    flavorRef: env.boot.flavorId,
    imageRef: env.boot.imageId,
    networks: [{ uuid: networkId }],
  });
  await env.os.compute.servers.waitForActive(s.id, { intervalMs: 20, timeoutMs: 10_000 });
  return env.os.compute.servers.get(s.id);
}

/**
 * The KubeControllerManager (operator.openshift.io/v1) and ClusterOperator (config.openshift.io/v1)
 * kinds, as far as the handshake reads them: any spec, a status with conditions. A test fixture,
 * for clusters that are not OpenShift; the ccm-operator ships its own declarations.
 */
export async function installHandshakeKinds(env: CcmEnv): Promise<void> {
  const crd = (group: string, kind: string, plural: string): KubernetesObject & Record<string, unknown> => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  });
  for (const c of [
    crd('operator.openshift.io', 'KubeControllerManager', 'kubecontrollermanagers'),
    crd('config.openshift.io', 'ClusterOperator', 'clusteroperators'),
  ]) {
    await env.api.create(await env.api.discover('apiextensions.k8s.io/v1', 'CustomResourceDefinition'), c);
  }
}
