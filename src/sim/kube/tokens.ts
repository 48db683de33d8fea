/**
 * ServiceAccount tokens: `POST serviceaccounts/<name>/token` (TokenRequest, what `kubectl create
 * token` sends) issues a JWT signed with a key of this emulator, bound to the ServiceAccount's uid
 * and expiring as asked; the server then accepts it as a bearer token while the ServiceAccount
 * with that uid exists, as the real service-account authenticator does.
 */
import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { field } from './errors.ts';
import { asArray, asNumber, asObj, asString, metaOf, type Obj } from './json.ts';
import type { FieldError } from './errors.ts';

/** The API server's default `--service-account-issuer` and `--api-audiences`. */
export const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

export interface TokenSubject {
  namespace: string;
  name: string;
  uid: string;
}

function b64url(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

export class ServiceAccountTokens {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly keyId: string;

  constructor() {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicKey = createPublicKey(privateKey);
    this.keyId = Buffer.from(this.publicKey.export({ format: 'der', type: 'spki' }))
      .subarray(-16)
      .toString('base64url');
  }

  /** Field errors of a TokenRequest's spec, in the TokenRequest validation's words. */
  validate(request: Obj): FieldError[] {
    const spec = asObj(request.spec) ?? {};
    const errs: FieldError[] = [];
    const exp = spec.expirationSeconds;
    if (exp !== undefined) {
      if (typeof exp !== 'number' || exp < MIN_EXPIRATION_SECONDS)
        errs.push(
          field.invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 10 minutes'),
        );
      else if (exp > MAX_EXPIRATION_SECONDS)
        errs.push(
          field.invalid('spec.expirationSeconds', exp, 'may not specify a duration larger than 2^32 seconds'),
        );
    }
    return errs;
  }

  /** The TokenRequest as the server answers it: defaults in the spec, the token in the status. */
  issue(sa: Obj, request: Obj, now: Date): Obj {
    const m = metaOf(sa);
    const subject: TokenSubject = {
      namespace: asString(m.namespace) ?? '',
      name: asString(m.name) ?? '',
      uid: asString(m.uid) ?? '',
    };
    const spec = asObj(request.spec) ?? {};
    const audiences = (asArray(spec.audiences) ?? []).filter((a): a is string => typeof a === 'string');
    const aud = audiences.length ? audiences : [ISSUER];
    const expirationSeconds = asNumber(spec.expirationSeconds) ?? DEFAULT_EXPIRATION_SECONDS;
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + expirationSeconds;
    const header = { alg: 'ES256', kid: this.keyId };
    const claims = {
      aud,
      exp,
      iat,
      iss: ISSUER,
      nbf: iat,
      sub: `system:serviceaccount:${subject.namespace}:${subject.name}`,
      'kubernetes.io': {
        namespace: subject.namespace,
        serviceaccount: { name: subject.name, uid: subject.uid },
      },
    };
    const signingInput = `${b64url(header)}.${b64url(claims)}`;
    const signature = sign('sha256', Buffer.from(signingInput), {
      key: this.privateKey,
      dsaEncoding: 'ieee-p1363',
    }).toString('base64url');
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: subject.name, namespace: subject.namespace, creationTimestamp: null },
      spec: {
        audiences: aud,
        expirationSeconds,
        boundObjectRef: asObj(spec.boundObjectRef) ?? null,
      },
      status: {
        token: `${signingInput}.${signature}`,
        expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    };
  }

  /** The ServiceAccount a token of ours names, when its signature holds and it has not expired. */
  verify(token: string, now: Date): TokenSubject | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [h = '', c = '', s = ''] = parts;
    const ok = verify(
      'sha256',
      Buffer.from(`${h}.${c}`),
      { key: this.publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(s, 'base64url'),
    );
    if (!ok) return undefined;
    let claims: Obj;
    try {
      claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as Obj;
    } catch {
      return undefined;
    }
    const exp = asNumber(claims.exp);
    if (exp === undefined || exp * 1000 <= now.getTime()) return undefined;
    const k8s = asObj(claims['kubernetes.io']) ?? {};
    const sa = asObj(k8s.serviceaccount) ?? {};
    const namespace = asString(k8s.namespace);
    const name = asString(sa.name);
    const uid = asString(sa.uid);
    if (!namespace || !name || !uid) return undefined;
    return { namespace, name, uid };
  }
}
