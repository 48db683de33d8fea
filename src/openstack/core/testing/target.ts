/**
 * Where the client's tests run: the emulator by default, or a real cloud when OS_CLOUD names one in
 * a clouds.yaml (OS_CLOUD_ADMIN: an admin cloud for the calls that need it; OS_CLOUD_ALT: a second
 * non-admin user, for trusts). Emulator-only tests (fault injection, token expiry, stats) check
 * `t.sim` and skip on a real cloud.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { createLogger, type Logger } from '../../../lib/log.ts';
import type { CloudOptions } from '../../../sim/openstack/index.ts';
import { startTestCloud, type TestCloud } from '../../../sim/openstack/testing/harness.ts';
import { OpenStackClient, type OpenStackClientOptions } from '../../client.ts';
import { processContext } from '../../config/context.ts';
import { resolveCloudConfig } from '../../config/resolve.ts';
import type { CloudConfig } from '../../config/types.ts';
import { TokenCache } from '../token-cache.ts';

export interface ClientTarget {
  name: string;
  /** The emulator; undefined on a real cloud. */
  sim: TestCloud | undefined;
  demo: CloudConfig;
  /** A second non-admin user (alt_demo on the emulator; OS_CLOUD_ALT on a real cloud). */
  alt: CloudConfig | undefined;
  admin: CloudConfig | undefined;
  /** The token cache the target's clients share unless a test gives its own. */
  tokens: TokenCache;
  /** A client over `config` (fast retries, silent log); closed by `close()`. */
  client(config: CloudConfig, options?: OpenStackClientOptions): Promise<OpenStackClient>;
  close(): Promise<void>;
}

export const silentLog: Logger = createLogger({ level: 'silent' });

/** A logger whose lines (JSON) are collected in `lines`. */
export function capturingLog(level: 'debug' | 'info' = 'debug'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { log: createLogger({ level, destination }), lines };
}

export async function openClientTarget(cloudOptions: CloudOptions = {}): Promise<ClientTarget> {
  const real = process.env.OS_CLOUD;
  if (real) {
    const resolve = async (cloud: string | undefined) =>
      cloud ? (await resolveCloudConfig({ ...processContext(), cloud })).config : undefined;
    const { client, closeClients, tokens } = clientFactory();
    return {
      name: real,
      sim: undefined,
      demo: (await resolve(real))!,
      alt: await resolve(process.env.OS_CLOUD_ALT),
      admin: await resolve(process.env.OS_CLOUD_ADMIN),
      tokens,
      client,
      close: closeClients,
    };
  }

  return openClientTargetOn(await startTestCloud(cloudOptions));
}

/** A target on an emulator the caller started (with its own options); `close()` stops it. */
export async function openClientTargetOn(sim: TestCloud): Promise<ClientTarget> {
  const { client, closeClients, tokens } = clientFactory();
  const dir = await mkdtemp(join(tmpdir(), 'shiftstack-client-'));
  const file = await writeCloudsYaml(sim, dir);
  const resolve = async (cloud: string) =>
    (
      await resolveCloudConfig({
        env: {},
        homedir: dir,
        cwd: dir,
        siteConfigDir: join(dir, 'etc'),
        cloudsYaml: file,
        cloud,
      })
    ).config;
  return {
    name: 'emulator',
    sim,
    demo: await resolve('demo'),
    alt: await resolve('alt-demo'),
    admin: await resolve('admin'),
    tokens,
    client,
    close: async () => {
      await closeClients();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function clientFactory() {
  const clients: OpenStackClient[] = [];
  const tokens = new TokenCache();
  const client = async (config: CloudConfig, options: OpenStackClientOptions = {}) => {
    const c = await OpenStackClient.fromConfig(config, {
      log: silentLog,
      tokenCache: tokens,
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      ...options,
    });
    clients.push(c);
    return c;
  };
  const closeClients = async () => {
    await Promise.all(clients.map((c) => c.close()));
  };
  return { client, closeClients, tokens };
}

/** A clouds.yaml for the emulator's seeded users. */
export async function writeCloudsYaml(sim: TestCloud, dir: string): Promise<string> {
  const entry = (user: string) => ({
    auth: {
      auth_url: sim.authUrl,
      username: user,
      password: sim.cloud.options.password,
      project_name: user,
      user_domain_name: 'Default',
      project_domain_name: 'Default',
    },
    region_name: sim.cloud.options.region,
  });
  const file = join(dir, 'clouds.yaml');
  await writeFile(
    file,
    stringify({ clouds: { demo: entry('demo'), 'alt-demo': entry('alt_demo'), admin: entry('admin') } }),
  );
  return file;
}

/** Adds an emulator fault (see docs/sim-openstack.md) and returns its id. */
export async function addFault(sim: TestCloud, spec: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${sim.url}/_sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });
  if (res.status !== 201) throw new Error(`fault not added: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { fault: { id: string } }).fault.id;
}

export async function clearFaults(sim: TestCloud): Promise<void> {
  await fetch(`${sim.url}/_sim/faults`, { method: 'DELETE' });
}

/** Every token issued so far answers 401 from now on. */
export async function expireTokens(sim: TestCloud): Promise<void> {
  const res = await fetch(`${sim.url}/_sim/tokens/expire`, { method: 'POST' });
  if (res.status !== 204) throw new Error(`tokens not expired: ${res.status}`);
}

/** Sets the answer latency of emulator operations (`neutron GET /v2.0/networks`: ms). */
export async function setLatency(sim: TestCloud, latency: Record<string, number>): Promise<void> {
  const res = await fetch(`${sim.url}/_sim/profile`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ latency }),
  });
  if (res.status !== 200) throw new Error(`latency not set: ${res.status} ${await res.text()}`);
}

/** A name unique to this run, so parallel or leftover runs never collide on a real cloud. */
export const unique = (prefix: string) =>
  `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
