/**
 * The demo's world: the OpenStack emulator on its realistic profile (time-scaled) and the
 * Kubernetes API emulator, both on loopback, with the files a user points tools at (a clouds.yaml
 * and a kubeconfig under `.shiftstack/`), the CAPO CRDs installed (their conversion webhook served
 * here, in the process that runs the demo's capo, on loopback), and the clients the demo itself
 * uses: an admin for the census, the demo project for the user's own set-up (a key pair), and a
 * Kubernetes client for the demo's objects.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { Logger } from '../lib/log.ts';
import {
  isAlreadyExists,
  kinds,
  KubeClient,
  type KubernetesObject,
  type ResourceType,
} from '../kube/index.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { ALL_KINDS } from '../capo/api/index.ts';
import { capoCustomResourceDefinitions } from '../capo/api/files.ts';
import { capoConversions } from '../capo/api/webhook.ts';
import { serveConversionWebhook, type RunningWebhook } from '../kube/conversion/webhook.ts';
import { OpenStackClient } from '../openstack/client.ts';
import { resolveCloudConfig } from '../openstack/config/resolve.ts';
import { TokenCache } from '../openstack/core/token-cache.ts';
import { startKubeSim, type RunningKubeSim } from '../sim/kube/start.ts';
import { startOpenStackSim, type RunningOpenStackSim } from '../sim/openstack/server.ts';
import { emulatedHosts, type HostView } from './kubelet.ts';

export const ADMIN_CLOUD = 'shiftstack-admin';
export const DEMO_CLOUD = 'shiftstack-demo';

export interface WorldOptions {
  /** Multiplies every delay of the realistic profile. */
  timeScale: number;
  /** The OpenStack emulator's port (0: a free one). */
  port: number;
  /** Where clouds.yaml, the kubeconfig and cloud.conf go (`.shiftstack` under the working directory). */
  dir: string;
  log?: Logger;
  signal?: AbortSignal;
}

export interface World {
  dir: string;
  timeScale: number;
  sim: RunningOpenStackSim;
  kube: RunningKubeSim;
  /** The conversion webhook of the CAPO and Cluster API CRDs (v1beta2 served beside v1beta1). */
  webhook: RunningWebhook;
  /** The cloud's own admin: census across projects. */
  admin: OpenStackClient;
  /** The demo project's user: what a person does by hand before applying manifests. */
  demo: OpenStackClient;
  /** The demo's own Kubernetes client (what `kubectl apply` would be). */
  api: KubeClient;
  kubeConfig: KubeConfig;
  /** Requests the Kubernetes API server has served, whoever made them. */
  kubeRequests(): number;
  /** What a VM knows of itself, read from the emulator as a metadata service would answer it. */
  host(instanceID: string): HostView | undefined;
  /** The demo project's credentials as a clouds.yaml document with one cloud named `cloudName`. */
  cloudsYaml(cloudName: string): string;
  close(): Promise<void>;
}

export async function startWorld(opts: WorldOptions): Promise<World> {
  await mkdir(opts.dir, { recursive: true });
  const sim = await startOpenStackSim({
    profile: 'realistic',
    overrides: { timeScale: opts.timeScale },
    port: opts.port,
    cloudsYamlPath: join(opts.dir, 'openstack', 'clouds.yaml'),
    ...(opts.log ? { log: opts.log } : {}),
  });
  let kube: RunningKubeSim | undefined;
  const clients: OpenStackClient[] = [];
  let api: KubeClient | undefined;
  let webhook: RunningWebhook | undefined;
  try {
    kube = await startKubeSim({ kubeconfigPath: join(opts.dir, 'kube', 'kubeconfig') });
    let requests = 0;
    kube.emulator.reactors.prepend('*', '*', () => {
      requests++;
      return { handled: false };
    });
    // Its own token cache: the census must not share a token with the controllers under test.
    const tokenCache = new TokenCache();
    const client = async (cloud: string) => {
      const { config } = await resolveCloudConfig({
        env: {},
        homedir: opts.dir,
        cwd: opts.dir,
        cloudsYaml: sim.cloudsYamlPath,
        cloud,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      const c = await OpenStackClient.fromConfig(config, {
        tokenCache,
        userAgent: 'shiftstack-demo',
        ...(opts.log ? { log: opts.log } : {}),
      });
      clients.push(c);
      return c;
    };
    const admin = await client(ADMIN_CLOUD);
    const demo = await client(DEMO_CLOUD);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kube.kubeconfig);
    api = new KubeClient(kubeConfig, {
      qps: 0,
      userAgent: 'shiftstack-demo',
      fieldManager: 'shiftstack-demo',
    });
    // The demo's capo acts as Cluster API core: its webhook converts CAPO's kinds and Cluster API's.
    webhook = await serveConversionWebhook({
      conversions: capoConversions({ clusterAPI: true }),
      port: 0,
      ...(opts.log ? { log: opts.log } : {}),
    });
    const crds = capoCustomResourceDefinitions({ url: webhook.url, caBundle: webhook.caBundle });
    await installCrds(
      api,
      crds.map((crd) => ({ text: stringifyYaml(crd) })),
      ALL_KINDS,
      opts.signal,
    );
    const converter = webhook;

    const running = kube;
    const cloud = sim.cloud;
    const kubeApi = api;
    return {
      dir: opts.dir,
      timeScale: opts.timeScale,
      sim,
      kube: running,
      webhook: converter,
      admin,
      demo,
      api: kubeApi,
      kubeConfig,
      kubeRequests: () => requests,
      host: emulatedHosts(cloud),
      cloudsYaml(cloudName) {
        const c = sim.cloud;
        return (
          `clouds:\n  ${cloudName}:\n    auth:\n      auth_url: ${c.authUrl}\n      username: demo\n` +
          `      password: ${c.options.password}\n      project_name: demo\n` +
          `      user_domain_name: Default\n      project_domain_name: Default\n` +
          `    region_name: ${c.options.region}\n    interface: public\n    identity_api_version: 3\n`
        );
      },
      async close() {
        await kubeApi.close();
        for (const c of clients) await c.close();
        await running.dispose();
        await converter.close();
        await sim.stop();
      },
    };
  } catch (err) {
    await api?.close();
    for (const c of clients) await c.close();
    await kube?.dispose();
    await webhook?.close();
    await sim.stop();
    throw err;
  }
}

/**
 * `kubectl apply -f` of CRD files generated from code (deploy/capo/crds, deploy/ccm-operator/crds),
 * then a wait until the emulator's CRD controller serves each kind.
 */
export async function installCrds(
  api: KubeClient,
  files: readonly { text: string }[],
  kindsServed: readonly { resource: ResourceType }[],
  signal: AbortSignal | undefined,
): Promise<void> {
  for (const f of files) {
    const crd = parseYaml(f.text) as KubernetesObject;
    try {
      await api.create(kinds.CustomResourceDefinition, crd as never, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  const deadline = Date.now() + 20_000;
  for (const k of kindsServed) {
    for (;;) {
      try {
        await api.list(k.resource, { limit: 1, signal });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}
