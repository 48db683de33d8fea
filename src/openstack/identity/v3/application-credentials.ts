/**
 * Keystone application credentials of a user (`/v3/users/{user_id}/application_credentials`). A
 * user manages only their own; the secret is shown once, in the create answer.
 * https://docs.openstack.org/api-ref/identity/v3/#application-credentials
 */
import type { CallOptions } from '../../core/call-options.ts';
import { Pager } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import type {
  ApplicationCredential,
  ApplicationCredentialCreateOpts,
  ApplicationCredentialListQuery,
  ApplicationCredentialWithSecret,
} from './types.ts';

const base = (userId: string) => `users/${encodeURIComponent(userId)}/application_credentials`;

export async function createApplicationCredential(
  sc: ServiceClient,
  userId: string,
  opts: ApplicationCredentialCreateOpts,
  options: CallOptions = {},
): Promise<ApplicationCredentialWithSecret> {
  const res = await sc.request<{ application_credential: ApplicationCredentialWithSecret }>({
    method: 'POST',
    path: base(userId),
    body: { application_credential: opts },
    label: 'application_credential_create',
    signal: options.signal,
    expect: [201],
  });
  return res.body.application_credential;
}

export function listApplicationCredentials(
  sc: ServiceClient,
  userId: string,
  query: ApplicationCredentialListQuery = {},
  options: CallOptions = {},
): Pager<ApplicationCredential> {
  return new Pager<ApplicationCredential>({
    client: sc,
    path: base(userId),
    query: { ...query },
    collection: 'application_credentials',
    strategy: 'keystone',
    label: 'application_credential_list',
    signal: options.signal,
  });
}

export async function getApplicationCredential(
  sc: ServiceClient,
  userId: string,
  id: string,
  options: CallOptions = {},
): Promise<ApplicationCredential> {
  const res = await sc.request<{ application_credential: ApplicationCredential }>({
    method: 'GET',
    path: `${base(userId)}/${encodeURIComponent(id)}`,
    label: 'application_credential_get',
    signal: options.signal,
  });
  return res.body.application_credential;
}

export async function deleteApplicationCredential(
  sc: ServiceClient,
  userId: string,
  id: string,
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'DELETE',
    path: `${base(userId)}/${encodeURIComponent(id)}`,
    label: 'application_credential_delete',
    signal: options.signal,
    expect: [204],
  });
}
