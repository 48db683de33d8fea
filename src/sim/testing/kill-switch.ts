/**
 * A controller process's network to the cloud and the cluster, cut the way `kill -9` cuts it: right
 * after the answer of its k-th OpenStack call (or write) reaches the wire, the process is gone. That
 * call took effect in the cloud; its answer, and everything the process would have sent afterwards
 * to OpenStack or to Kubernetes, is lost. Killing at the network is the one seam that needs nothing
 * of the process: the controller under test (the CCM, CAPO, any part) is the real build with a
 * cloud.conf or clouds.yaml and a kubeconfig pointing here. Test code only: it lives under testing/,
 * which no production module may import (scripts/architecture.ts). For an engine driven in-process,
 * src/openstack/services/testing/kill.ts kills at the client instead.
 *
 * - OpenStack: an HTTP proxy in front of the emulator. It counts the calls it forwards; the base URL
 *   the emulator writes into its answers (catalog, version documents, `next` links) is rewritten to
 *   the proxy's, so every later call comes back through it. Once the k-th call is on its way, later
 *   calls are held and never forwarded: at most k calls take effect, a deterministic cut.
 * - Kubernetes: a TCP relay in front of the API server (TLS passes through untouched, and the
 *   emulator's certificate is valid for 127.0.0.1 on any port). At the kill every connection is
 *   destroyed and nothing new is accepted.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  connect,
  createServer as createTcpServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';

export interface KillSwitchOptions {
  /** The OpenStack emulator's base URL (scheme, host, port). */
  cloudUrl: string;
  /** The Kubernetes API server's URL. */
  kubeUrl: string;
  /** Dies right after the answer of this OpenStack call arrives; Infinity counts without ever dying. */
  after: number;
  /**
   * Dies right after the answer of this write (any method but GET, HEAD, OPTIONS) arrives, whatever
   * number of reads came before it: how many polls precede a write depends on timing, its rank
   * among the writes does not.
   */
  afterWrites?: number | undefined;
}

export interface KillSwitch {
  /** The cloud's base URL through the switch: use it in place of the emulator's. */
  readonly cloudUrl: string;
  /** The API server's URL through the switch. */
  readonly kubeUrl: string;
  /** OpenStack calls forwarded so far (`METHOD /path`), in order; the last one is fatal once dead. */
  readonly forwarded: readonly string[];
  /** How many of them change something (any method but GET, HEAD, OPTIONS). */
  readonly writes: number;
  readonly dead: boolean;
  /** Settles once the switch has cut the network. */
  readonly died: Promise<void>;
  /** Cuts the network now (also the end of a test: nothing keeps listening). */
  close(): Promise<void>;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Hop-by-hop headers and those the relayed body changes. */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

export async function startKillSwitch(opts: KillSwitchOptions): Promise<KillSwitch> {
  const sockets = new Set<Socket>();
  let dead = false;
  /** The fatal call is under way: later ones wait for the end instead of reaching the cloud. */
  let doomed = false;
  let writes = 0;
  const forwarded: string[] = [];
  let markDead!: () => void;
  const died = new Promise<void>((resolve) => (markDead = resolve));

  const track = (s: Socket) => {
    if (dead) {
      s.destroy();
      return;
    }
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  function kill(): void {
    if (dead) return;
    dead = true;
    for (const s of sockets) s.destroy();
    sockets.clear();
    cloud.close();
    kube.close();
    markDead();
  }

  const cloud = createHttpServer((req, res) => void relay(req, res));
  cloud.on('connection', track);
  const kubeTarget = new URL(opts.kubeUrl);
  const kube: Server = createTcpServer((client) => {
    track(client);
    if (dead) return;
    const upstream = connect(Number(kubeTarget.port), kubeTarget.hostname);
    track(upstream);
    client.pipe(upstream).on('error', () => client.destroy());
    upstream.pipe(client).on('error', () => upstream.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });

  const [cloudPort, kubePort] = await Promise.all([listen(cloud), listen(kube)]);
  const self = `http://127.0.0.1:${cloudPort}`;
  const upstreamBase = opts.cloudUrl.replace(/\/$/, '');

  async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(c as Buffer);
    } catch {
      return;
    }
    const method = req.method ?? 'GET';
    if (dead || doomed) {
      // A call the process made after the fatal one: it never leaves the dying host.
      await died;
      res.destroy();
      return;
    }
    const write = !READS.has(method);
    if (write) writes++;
    forwarded.push(`${method} ${req.url ?? '/'}`);
    const fatal =
      forwarded.length >= opts.after ||
      (write && opts.afterWrites !== undefined && writes >= opts.afterWrites);
    if (fatal) doomed = true;

    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || DROPPED.has(k)) continue;
      for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
    }
    let answer: Response;
    let body: Buffer;
    try {
      answer = await fetch(`${upstreamBase}${req.url ?? '/'}`, {
        method,
        headers,
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        redirect: 'manual',
      });
      body = Buffer.from(await answer.arrayBuffer());
    } catch {
      if (fatal) kill();
      res.destroy();
      return;
    }
    if (fatal || dead) {
      // The call took effect; the process dies before its answer is read.
      kill();
      res.destroy();
      return;
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!DROPPED.has(k)) out[k] = v.replaceAll(upstreamBase, self);
    });
    const text = body.length > 0 ? Buffer.from(body.toString('utf8').replaceAll(upstreamBase, self)) : body;
    out['content-length'] = String(text.length);
    res.writeHead(answer.status, out);
    res.end(text);
  }

  return {
    cloudUrl: self,
    kubeUrl: `${kubeTarget.protocol}//127.0.0.1:${kubePort}`,
    get forwarded() {
      return forwarded;
    },
    get writes() {
      return writes;
    },
    get dead() {
      return dead;
    },
    died,
    async close() {
      kill();
      await Promise.all([closed(cloud), closed(kube)]);
    },
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closed(server: Server): Promise<void> {
  return server.listening ? new Promise((resolve) => server.close(() => resolve())) : Promise.resolve();
}
