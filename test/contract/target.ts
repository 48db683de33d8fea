/**
 * Where the contract scenarios run: the emulator by default, or a real cloud named by OS_CLOUD in a
 * clouds.yaml (OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/clouds.yaml,
 * /etc/openstack/clouds.yaml). OS_CLOUD_ADMIN names an admin cloud for the calls that need it.
 *
 * The scenarios talk raw HTTP through this small session so that they test the cloud, not our client.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { startOpenStackSim, type RunningOpenStackSim } from '../../src/sim/openstack/server.ts';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface Session {
  projectId: string;
  userId: string;
  token: string;
  url(type: string): string;
  request<T = any>(
    type: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply<T>>;
}

export interface Target {
  name: string;
  emulated: boolean;
  demo: Session;
  /** Undefined when the real cloud has no admin credentials configured. */
  admin: Session | undefined;
  close(): Promise<void>;
}

interface CloudEntry {
  auth: Record<string, string>;
  region_name?: string;
  interface?: string;
}

export async function openTarget(): Promise<Target> {
  const real = process.env.OS_CLOUD;
  if (real) {
    const clouds = loadClouds();
    const entry = clouds[real];
    if (!entry) throw new Error(`OS_CLOUD=${real} is not in clouds.yaml (${Object.keys(clouds).join(', ')})`);
    const adminName = process.env.OS_CLOUD_ADMIN;
    const adminEntry = adminName ? clouds[adminName] : undefined;
    return {
      name: real,
      emulated: false,
      demo: await login(entry),
      admin: adminEntry ? await login(adminEntry) : undefined,
      close: async () => {},
    };
  }
  // Transitions long enough to observe PENDING_* and BUILD, as on a real cloud; short enough for CI.
  const sim: RunningOpenStackSim = await startOpenStackSim({
    cloudsYamlPath: join(tmpdir(), `shiftstack-contract-${process.pid}-${Date.now()}.yaml`),
    overrides: {
      transitions: {
        'octavia.loadbalancer.create': 300,
        'octavia.child.create': 200,
        'octavia.child.update': 200,
        'octavia.member.batch': 200,
        'octavia.loadbalancer.delete': 100,
        'nova.server.build': 200,
        'nova.server.stop': 100,
      },
    },
  });
  const clouds = (parse(readFileSync(sim.cloudsYamlPath, 'utf8')) as { clouds: Record<string, CloudEntry> })
    .clouds;
  return {
    name: 'emulator',
    emulated: true,
    demo: await login(clouds['shiftstack-demo']!),
    admin: await login(clouds['shiftstack-admin']!),
    close: () => sim.stop(),
  };
}

function loadClouds(): Record<string, CloudEntry> {
  const candidates = [
    process.env.OS_CLIENT_CONFIG_FILE,
    join(process.cwd(), 'clouds.yaml'),
    join(homedir(), '.config/openstack/clouds.yaml'),
    '/etc/openstack/clouds.yaml',
  ].filter((p): p is string => !!p);
  const file = candidates.find((p) => existsSync(p));
  if (!file) throw new Error(`no clouds.yaml found (looked in ${candidates.join(', ')})`);
  return (parse(readFileSync(file, 'utf8')) as { clouds: Record<string, CloudEntry> }).clouds;
}

async function login(entry: CloudEntry): Promise<Session> {
  const a = entry.auth;
  const authUrl = a.auth_url!.replace(/\/+$/, '').replace(/\/v3$/, '');
  const res = await fetch(`${authUrl}/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: {
            user: {
              name: a.username,
              domain: { name: a.user_domain_name ?? 'Default' },
              password: a.password,
            },
          },
        },
        scope: { project: { name: a.project_name, domain: { name: a.project_domain_name ?? 'Default' } } },
      },
    }),
    signal: AbortSignal.timeout(60_000),
  });
  if (res.status !== 201)
    throw new Error(`login to ${authUrl} as ${a.username}: ${res.status} ${await res.text()}`);
  const token = res.headers.get('x-subject-token')!;
  const body = (await res.json()) as {
    token: {
      project: { id: string };
      user: { id: string };
      catalog: { type: string; endpoints: { interface: string; region_id: string; url: string }[] }[];
    };
  };
  const iface = entry.interface ?? 'public';
  const url = (type: string) => {
    const svc = body.token.catalog.find((s) => s.type === type);
    const ep = svc?.endpoints.find(
      (e) => e.interface === iface && (!entry.region_name || e.region_id === entry.region_name),
    );
    if (!ep) throw new Error(`no ${iface} endpoint for ${type} in the catalog`);
    return ep.url.replace(/\/+$/, '');
  };
  return {
    projectId: body.token.project.id,
    userId: body.token.user.id,
    token,
    url,
    async request<T>(
      type: string,
      method: string,
      path: string,
      reqBody?: unknown,
      headers: Record<string, string> = {},
    ) {
      const h: Record<string, string> = { accept: 'application/json', 'x-auth-token': token, ...headers };
      if (reqBody !== undefined) h['content-type'] ??= 'application/json';
      const r = await fetch(`${url(type)}${path}`, {
        method,
        headers: h,
        ...(reqBody !== undefined
          ? {
              body:
                typeof reqBody === 'string' || reqBody instanceof Uint8Array
                  ? reqBody
                  : JSON.stringify(reqBody),
            }
          : {}),
        signal: AbortSignal.timeout(120_000),
      });
      const text = await r.text();
      let parsed: unknown = undefined;
      if (text) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return { status: r.status, headers: r.headers, body: parsed as T };
    },
  };
}

/** Polls until `fn` returns a value; bounded. Real clouds take seconds, the emulator milliseconds. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    await sleep(delay);
    delay = Math.min(delay * 2, 1_000);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** A name unique to this run, so parallel or leftover runs never collide. */
export const unique = (prefix: string) =>
  `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
