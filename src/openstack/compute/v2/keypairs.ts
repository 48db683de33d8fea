/**
 * Nova keypairs: the SSH public keys a server can be booted with (`key_name`). They belong to a
 * user, not a project. https://docs.openstack.org/api-ref/compute/#keypairs-keypairs
 */
import type { CallOptions } from '../../core/call-options.ts';
import { NegotiatingPager } from '../../core/microversion.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { atLeast, computeMicroversion, requireMicroversion } from './microversion.ts';

export interface Keypair {
  name: string;
  public_key: string;
  fingerprint: string;
  user_id?: string;
  /** @microversion 2.2 */
  type?: 'ssh' | 'x509';
  /** Only in the answer to a create without `public_key` (Nova generates the pair), and only before 2.92. */
  private_key?: string;
  /** In `get` only. */
  id?: number;
  created_at?: string;
}

export interface KeypairCreateOpts {
  name: string;
  /** From 2.92 Nova no longer generates keys: give one. */
  public_key?: string;
  /** @microversion 2.2 */
  type?: 'ssh' | 'x509';
  /** @microversion 2.10 an admin creating for another user */
  user_id?: string;
  [field: string]: unknown;
}

const item = (name: string) => `os-keypairs/${encodeURIComponent(name)}`;

/** `POST /os-keypairs` → the keypair (with `private_key` when Nova generated it). A name in use is a 409. */
export async function createKeypair(
  sc: ServiceClient,
  keypair: KeypairCreateOpts,
  options: CallOptions = {},
): Promise<Keypair> {
  const mv = await computeMicroversion(sc, options.signal);
  if (keypair.type !== undefined) await requireMicroversion(sc, mv, '2.2', 'a keypair type', options.signal);
  const res = await sc.request<{ keypair: Keypair }>({
    method: 'POST',
    path: 'os-keypairs',
    body: { keypair },
    label: 'keypair_create',
    signal: options.signal,
    // 200 before 2.2, 201 from it.
    expect: [200, 201],
  });
  return res.body.keypair;
}

/** `GET /os-keypairs/{name}`. */
export async function getKeypair(
  sc: ServiceClient,
  name: string,
  options: CallOptions = {},
): Promise<Keypair> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ keypair: Keypair }>({
    method: 'GET',
    path: item(name),
    label: 'keypair_get',
    signal: options.signal,
  });
  return res.body.keypair;
}

/**
 * `GET /os-keypairs`, every page (links from 2.35), unwrapped: Nova lists `{"keypair": {…}}`
 * entries, this returns the keypairs themselves. A user has few keypairs, hence a plain array.
 */
export async function listKeypairs(
  sc: ServiceClient,
  query: { user_id?: string; limit?: number } = {},
  options: CallOptions = {},
): Promise<Keypair[]> {
  const mv = await computeMicroversion(sc, options.signal);
  const pager = new NegotiatingPager<{ keypair: Keypair }>({
    client: sc,
    negotiate: computeMicroversion,
    path: 'os-keypairs',
    query: { ...query },
    collection: 'keypairs',
    // Before 2.35 there is no paging: one answer holds them all.
    strategy: atLeast(mv, '2.35') ? 'links' : 'single',
    label: 'keypair_list',
    signal: options.signal,
  });
  return (await pager.all()).map((k) => k.keypair);
}

/** `DELETE /os-keypairs/{name}` → 202 before 2.2, 204 from it. Servers booted with it keep the key. */
export async function deleteKeypair(
  sc: ServiceClient,
  name: string,
  options: CallOptions = {},
): Promise<void> {
  await computeMicroversion(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: item(name),
    label: 'keypair_delete',
    signal: options.signal,
    expect: [202, 204],
    responseType: 'bytes',
  });
}
