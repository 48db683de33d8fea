/**
 * Test support for the OpenStack emulator: a listening cloud per test, tokens for the seeded users,
 * and a small JSON request helper. Tests talk HTTP to the emulator, as production code talks to a cloud.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createOpenStackSim, type CloudOptions, type EmulatedCloud } from '../index.ts';
import type { ServiceName } from '../core/types.ts';

export type SeededUser = 'admin' | 'demo' | 'alt_demo';

export interface SimResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body sent as is (for malformed-JSON tests). */
  raw?: string;
  /** A token to send; `null` sends none. Defaults to a token of `user`. */
  token?: string | null;
  user?: SeededUser;
  headers?: Record<string, string>;
}

export interface TestCloud {
  cloud: EmulatedCloud;
  url: string;
  authUrl: string;
  token(user?: SeededUser): Promise<string>;
  /** `path` is below the service prefix, e.g. request('neutron', 'GET', '/v2.0/ports'). */
  request<T = any>(
    service: ServiceName,
    method: string,
    path: string,
    options?: RequestOptions,
  ): Promise<SimResult<T>>;
  close(): Promise<void>;
}

export const PASSWORD = 'secret';

export async function startTestCloud(options: CloudOptions = {}): Promise<TestCloud> {
  const cloud = createOpenStackSim({ password: PASSWORD, ...options });
  const url = await cloud.listen(0);
  const tokens = new Map<SeededUser, string>();

  async function token(user: SeededUser = 'admin'): Promise<string> {
    const cached = tokens.get(user);
    if (cached) return cached;
    const res = await fetch(`${cloud.authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: user, domain: { id: 'default' }, password: cloud.options.password } },
          },
          scope: { project: { name: user, domain: { id: 'default' } } },
        },
      }),
    });
    const t = res.headers.get('x-subject-token');
    if (res.status !== 201 || !t) throw new Error(`token for ${user}: ${res.status} ${await res.text()}`);
    tokens.set(user, t);
    return t;
  }

  async function request<T>(
    service: ServiceName,
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<SimResult<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    const t = options.token === undefined ? await token(options.user ?? 'admin') : options.token;
    if (t) headers['x-auth-token'] = t;
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${cloud.serviceUrl(service)}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    if (text && (res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    else if (!text) parsed = undefined;
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  return {
    cloud,
    url,
    authUrl: cloud.authUrl,
    token,
    request,
    close: () => cloud.close(),
  };
}

/** Polls `fn` until it returns a truthy value; bounded by `timeoutMs`. */
export async function eventually<T>(
  fn: () => Promise<T> | T,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    await sleep(options.intervalMs ?? 10);
  }
  throw new Error(
    `timed out waiting for ${options.what ?? 'condition'}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
  );
}
