/** os-keypairs: per-user SSH (and imported x509) key pairs, generated when no public key is given (before 2.92). */
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { SimError } from '../core/errors.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import {
  asRecord,
  auth,
  collectionLinks,
  empty,
  json,
  limitOf,
  microIso,
  pageAfter,
  requireAdmin,
} from './http.ts';
import type { Microversions } from './microversion.ts';
import * as t from './schema.ts';

export interface KeypairRecord {
  id: number;
  name: string;
  user_id: string;
  public_key: string;
  fingerprint: string;
  type: 'ssh' | 'x509';
  created_at: string;
}

const SSH_TYPES = new Set([
  'ssh-rsa',
  'ssh-dss',
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
]);

const invalidKey = () => new SimError(400, 'Keypair data is invalid: failed to generate fingerprint');

const colonHex = (hex: string) => hex.match(/../g)?.join(':') ?? '';

/** MD5 of the key blob, as nova.crypto.generate_fingerprint prints it. */
export function sshFingerprint(publicKey: string): string {
  const [type, b64] = publicKey.trim().split(/\s+/);
  if (!type || !b64 || !SSH_TYPES.has(type) || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw invalidKey();
  const blob = Buffer.from(b64, 'base64');
  if (blob.length < 4) throw invalidKey();
  const len = blob.readUInt32BE(0);
  if (blob.subarray(4, 4 + len).toString('latin1') !== type) throw invalidKey();
  return colonHex(createHash('md5').update(blob).digest('hex'));
}

function x509Fingerprint(pem: string): string {
  try {
    return new X509Certificate(pem).fingerprint.replaceAll(':', '').toLowerCase().match(/../g)!.join(':');
  } catch {
    throw invalidKey();
  }
}

function sshString(b: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}

function mpint(b64url: string): Buffer {
  let b = Buffer.from(b64url, 'base64url');
  if (b.length > 0 && (b[0]! & 0x80) !== 0) b = Buffer.concat([Buffer.from([0]), b]);
  return sshString(b);
}

/** An RSA 2048 pair: OpenSSH public key and PKCS#1 PEM private key, as Nova generates them. */
export function generateSshKey(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  const blob = Buffer.concat([sshString(Buffer.from('ssh-rsa')), mpint(jwk.e!), mpint(jwk.n!)]);
  return {
    publicKey: `ssh-rsa ${blob.toString('base64')} Generated-by-Nova`,
    privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  };
}

export class KeypairStore {
  /** Keyed by `${user_id}/${name}`. */
  readonly byKey = new Map<string, KeypairRecord>();
  private seq = 0;

  get(userId: string, name: string): KeypairRecord | undefined {
    return this.byKey.get(`${userId}/${name}`);
  }

  add(rec: Omit<KeypairRecord, 'id' | 'created_at'>): KeypairRecord {
    const full: KeypairRecord = { ...rec, id: ++this.seq, created_at: microIso() };
    this.byKey.set(`${rec.user_id}/${rec.name}`, full);
    return full;
  }

  snapshot(): unknown {
    return { seq: this.seq, keypairs: [...this.byKey.values()] };
  }

  restore(data: unknown): void {
    const d = asRecord(data);
    this.byKey.clear();
    for (const k of (d['keypairs'] as KeypairRecord[] | undefined) ?? [])
      this.byKey.set(`${k.user_id}/${k.name}`, k);
    this.seq = typeof d['seq'] === 'number' ? d['seq'] : this.byKey.size;
  }
}

function createSchema(mv: Microversions, req: SimRequest): t.Schema {
  const special = mv.atLeast(req, '2.92');
  return {
    type: 'object',
    properties: {
      keypair: {
        type: 'object',
        properties: {
          name: {
            type: 'string',
            minLength: 1,
            maxLength: 255,
            pattern: special ? '^[a-zA-Z0-9 _\\-@.]+$' : '^[a-zA-Z0-9 _-]+$',
          },
          public_key: { type: 'string' },
          ...(mv.atLeast(req, '2.2') ? { type: { type: 'string', enum: ['ssh', 'x509'] } } : {}),
          ...(mv.atLeast(req, '2.10') ? { user_id: { type: 'string', minLength: 1, maxLength: 255 } } : {}),
        },
        required: special ? ['name', 'public_key'] : ['name'],
        additionalProperties: false,
      },
    },
    required: ['keypair'],
    additionalProperties: false,
  };
}

export function keypairRoutes(store: KeypairStore, mv: Microversions, changed: () => void): Route[] {
  /** Admins may act for another user from 2.10 (`user_id`). */
  const userOf = (req: SimRequest, explicit: unknown): string => {
    const a = auth(req);
    if (typeof explicit === 'string' && explicit !== a.userId && mv.atLeast(req, '2.10')) {
      requireAdmin(req, 'os_compute_api:os-keypairs:create');
      return explicit;
    }
    return a.userId;
  };

  const withType = (req: SimRequest, k: KeypairRecord, base: Record<string, unknown>) =>
    mv.atLeast(req, '2.2') ? { ...base, type: k.type } : base;

  const find = (req: SimRequest): KeypairRecord => {
    const name = req.params['keypair_name']!;
    const q = mv.atLeast(req, '2.10') ? req.query.get('user_id') : null;
    const user =
      q && q !== auth(req).userId
        ? (requireAdmin(req, 'os_compute_api:os-keypairs:show'), q)
        : auth(req).userId;
    const k = store.get(user, name);
    if (!k) throw new SimError(404, `Keypair ${name} not found for user ${user}`);
    return k;
  };

  const create = (req: SimRequest): SimResponse => {
    t.validateBody(createSchema(mv, req), req.body);
    const spec = asRecord(asRecord(req.body)['keypair']);
    const userId = userOf(req, spec['user_id']);
    const name = String(spec['name']);
    const type = spec['type'] === 'x509' ? 'x509' : 'ssh';
    if (store.get(userId, name)) throw new SimError(409, `Key pair '${name}' already exists.`);
    let publicKey = typeof spec['public_key'] === 'string' ? spec['public_key'] : undefined;
    let privateKey: string | undefined;
    if (publicKey === undefined) {
      if (type === 'x509') {
        throw new SimError(501, 'The emulator does not generate x509 key pairs; import one with public_key.');
      }
      ({ publicKey, privateKey } = generateSshKey());
    }
    const fingerprint = type === 'x509' ? x509Fingerprint(publicKey) : sshFingerprint(publicKey);
    const k = store.add({ name, user_id: userId, public_key: publicKey, fingerprint, type });
    changed();
    const body = withType(req, k, {
      name: k.name,
      public_key: k.public_key,
      fingerprint: k.fingerprint,
      user_id: k.user_id,
      ...(privateKey ? { private_key: privateKey } : {}),
    });
    return json(mv.atLeast(req, '2.2') ? 201 : 200, { keypair: body });
  };

  const list = (req: SimRequest): SimResponse => {
    const a = auth(req);
    const q = mv.atLeast(req, '2.10') ? req.query.get('user_id') : null;
    const user = q && q !== a.userId ? (requireAdmin(req, 'os_compute_api:os-keypairs:index'), q) : a.userId;
    let items = [...store.byKey.values()]
      .filter((k) => k.user_id === user)
      .sort((x, y) => (x.name < y.name ? -1 : 1));
    const paged = mv.atLeast(req, '2.35');
    if (paged) items = pageAfter(items, (k) => k.name, req.query.get('marker'), limitOf(req));
    const out: Record<string, unknown> = {
      keypairs: items.map((k) => ({
        keypair: withType(req, k, { name: k.name, public_key: k.public_key, fingerprint: k.fingerprint }),
      })),
    };
    if (paged) {
      const next = collectionLinks(req, 'os-keypairs', items.length, items.at(-1)?.name);
      if (next.length > 0) out['keypairs_links'] = next;
    }
    return json(200, out);
  };

  const show = (req: SimRequest): SimResponse => {
    const k = find(req);
    return json(200, {
      keypair: withType(req, k, {
        name: k.name,
        public_key: k.public_key,
        fingerprint: k.fingerprint,
        user_id: k.user_id,
        created_at: k.created_at,
        deleted: false,
        deleted_at: null,
        updated_at: null,
        id: k.id,
      }),
    });
  };

  const remove = (req: SimRequest): SimResponse => {
    const k = find(req);
    store.byKey.delete(`${k.user_id}/${k.name}`);
    changed();
    return empty(mv.atLeast(req, '2.2') ? 204 : 202);
  };

  return [
    { method: 'GET', template: '/v2.1/os-keypairs', handler: list },
    { method: 'POST', template: '/v2.1/os-keypairs', handler: create },
    { method: 'GET', template: '/v2.1/os-keypairs/{keypair_name}', handler: show },
    { method: 'DELETE', template: '/v2.1/os-keypairs/{keypair_name}', handler: remove },
  ];
}
