/**
 * Keystone tokens: issue one for any identity, validate or check someone else's, revoke.
 * The Session issues and refreshes its own token; this module is for tokens a program handles on
 * behalf of others (a webhook checking a caller's token, a job minting a scoped token).
 * https://docs.openstack.org/api-ref/identity/v3/#authentication-and-token-management
 */
import type { CallOptions } from '../../core/call-options.ts';
import { OpenStackHttpError } from '../../core/errors.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import type { KeystoneToken, TokenResponseBody } from '../../core/keystone.ts';

export interface IssuedToken {
  /** The `X-Subject-Token`. A secret: never log it. */
  value: string;
  token: KeystoneToken;
}

/** `POST /v3/auth/tokens` with an `{auth:{identity, scope}}` body (see `authRequestBody`). */
export async function issueToken(
  sc: ServiceClient,
  body: { auth: Record<string, unknown> },
  options: CallOptions & { noCatalog?: boolean } = {},
): Promise<IssuedToken> {
  const res = await sc.request<TokenResponseBody>({
    method: 'POST',
    path: 'auth/tokens',
    query: options.noCatalog ? { nocatalog: true } : undefined,
    body,
    label: 'token_create',
    signal: options.signal,
    expect: [201],
  });
  const value = res.headers.get('x-subject-token');
  if (!value) {
    throw new OpenStackHttpError({
      status: res.status,
      method: 'POST',
      url: res.url,
      service: sc.type,
      requestId: res.requestId,
      serviceMessage: 'Keystone answered 201 without an X-Subject-Token header',
    });
  }
  return { value, token: res.body.token };
}

/** `GET /v3/auth/tokens`: the token's body; throws NotFound (404) for an invalid or expired token. */
export async function validateToken(
  sc: ServiceClient,
  subjectToken: string,
  options: CallOptions & { allowExpired?: boolean; noCatalog?: boolean } = {},
): Promise<KeystoneToken> {
  const res = await sc.request<TokenResponseBody>({
    method: 'GET',
    path: 'auth/tokens',
    query: {
      ...(options.allowExpired ? { allow_expired: true } : {}),
      ...(options.noCatalog ? { nocatalog: true } : {}),
    },
    headers: { 'X-Subject-Token': subjectToken },
    label: 'token_get',
    signal: options.signal,
  });
  return res.body.token;
}

/** `HEAD /v3/auth/tokens`: true for a valid token, false for an invalid or expired one. */
export async function checkToken(
  sc: ServiceClient,
  subjectToken: string,
  options: CallOptions = {},
): Promise<boolean> {
  const res = await sc.request({
    method: 'HEAD',
    path: 'auth/tokens',
    headers: { 'X-Subject-Token': subjectToken },
    label: 'token_check',
    signal: options.signal,
    expect: [200, 204, 404],
    responseType: 'bytes',
  });
  return res.status !== 404;
}

/** `DELETE /v3/auth/tokens`: revokes the token. */
export async function revokeToken(
  sc: ServiceClient,
  subjectToken: string,
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'DELETE',
    path: 'auth/tokens',
    headers: { 'X-Subject-Token': subjectToken },
    label: 'token_delete',
    signal: options.signal,
    expect: [204],
  });
}
