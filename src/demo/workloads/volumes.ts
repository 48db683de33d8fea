/**
 * A pod's volumes, materialized under its root as the kubelet's volume plugins would mount them:
 * each volume in `<root>/.volumes/<name>`, and each `volumeMount` a symlink at
 * `<root>/<mountPath>` (to `subPath` inside the volume when given), so every container of the pod
 * sees the same files.
 *
 * - configMap and secret: the keys (or `items`, with their paths and modes; `defaultMode`, 0644
 *   by default); a missing object or key fails the mount unless `optional`. ConfigMap text has
 *   its mount paths moved under the pod root (paths.ts, the runner's one liberty).
 * - downwardAPI: fieldRef items; projected: configMap, secret, downwardAPI and
 *   serviceAccountToken sources in one directory (a token from the TokenRequest API, renewed
 *   after 80 % of its life, as the kubelet does).
 * - emptyDir: a directory of the pod's; hostPath: the host directory the runner is given for it,
 *   else an empty directory of the runner's own, shared by its pods as a node's would be.
 *
 * `refresh` is the kubelet's periodic sync: files whose source changed are rewritten (write to a
 * temporary file, then rename, so a reader never sees half a file), keys that went away are
 * removed, and a source that is gone keeps its last content — no restart.
 */
import { chmod, lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { V1KeyToPath, V1PodSpec, V1Volume, V1VolumeProjection } from '@kubernetes/client-node';
import type { PodPaths } from './paths.ts';
import { dataOf, fieldValue, type ObjectSource, type PodFacts } from './pod-spec.ts';

/** A volume that cannot be set up (the kubelet's FailedMount). */
export class MountError extends Error {
  override readonly name = 'MountError';
  readonly volume: string;
  constructor(volume: string, message: string) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${message}`);
    this.volume = volume;
  }
}

export interface TokenIssuer {
  /** A ServiceAccount token for the pod (TokenRequest), valid `expirationSeconds`. */
  token(audience: string | undefined, expirationSeconds: number): Promise<string>;
}

export interface VolumeContext {
  pod: PodFacts;
  paths: PodPaths;
  source: ObjectSource;
  tokens: TokenIssuer;
  /** Where a hostPath volume's path is on this host. */
  hostDir: (path: string) => string;
  now: () => number;
}

interface File {
  data: Buffer;
  mode: number;
}

interface IssuedToken {
  token: string;
  renewAtMs: number;
}

const DEFAULT_MODE = 0o644;
/** The kubelet's projected token default, and its floor. */
const TOKEN_SECONDS = 3600;

export class PodVolumes {
  private readonly root: string;
  private readonly spec: V1PodSpec;
  private readonly ctx: VolumeContext;
  /** What each volume holds now (relative path → content). */
  private readonly written = new Map<string, Map<string, File>>();
  private readonly issued = new Map<string, IssuedToken>();

  constructor(root: string, spec: V1PodSpec, ctx: VolumeContext) {
    this.root = root;
    this.spec = spec;
    this.ctx = ctx;
  }

  /** Every volume and mount; a MountError names the first that cannot be set up. */
  async setUp(): Promise<void> {
    for (const v of this.spec.volumes ?? []) {
      const files = await this.contentOf(v, true);
      if (files) await this.write(v.name, files);
      else if (!v.hostPath) await mkdir(this.volumeDir(v.name), { recursive: true });
    }
    for (const c of this.spec.containers) {
      for (const m of c.volumeMounts ?? []) {
        const v = this.spec.volumes?.find((x) => x.name === m.name);
        if (!v) throw new MountError(m.name, 'no such volume in the pod spec');
        await this.mount(v, m.mountPath, m.subPath);
      }
    }
  }

  /** Rewrites what changed in the volumes' sources; a source gone keeps its last content. */
  async refresh(): Promise<void> {
    for (const v of this.spec.volumes ?? []) {
      let files: Map<string, File> | undefined;
      try {
        files = await this.contentOf(v, false);
      } catch (err) {
        if (err instanceof MountError) continue;
        throw err;
      }
      if (files) await this.write(v.name, files);
    }
  }

  private volumeDir(name: string): string {
    return join(this.root, '.volumes', name);
  }

  private async mount(v: V1Volume, mountPath: string, subPath: string | undefined): Promise<void> {
    let target = v.hostPath ? this.ctx.hostDir(v.hostPath.path) : this.volumeDir(v.name);
    if (v.hostPath) {
      const type = v.hostPath.type ?? '';
      if (type === 'File' || type === 'FileOrCreate') {
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, '', { flag: 'a' });
      } else {
        await mkdir(target, { recursive: true });
      }
    }
    if (subPath) target = join(target, subPath);
    const at = this.ctx.paths.hostPath(mountPath);
    await mkdir(dirname(at), { recursive: true });
    const existing = await lstat(at).catch(() => undefined);
    // Two containers mounting the volume at one path share the link.
    if (existing) return;
    await symlink(target, at);
  }

  private async write(name: string, files: Map<string, File>): Promise<void> {
    const dir = this.volumeDir(name);
    const before = this.written.get(name) ?? new Map<string, File>();
    await mkdir(dir, { recursive: true });
    for (const [path, f] of files) {
      const old = before.get(path);
      if (old && old.mode === f.mode && old.data.equals(f.data)) continue;
      const at = join(dir, path);
      await mkdir(dirname(at), { recursive: true });
      const tmp = `${at}.tmp-${process.pid}`;
      await writeFile(tmp, f.data, { mode: f.mode });
      await chmod(tmp, f.mode);
      await rename(tmp, at);
    }
    for (const path of before.keys()) if (!files.has(path)) await rm(join(dir, path), { force: true });
    this.written.set(name, files);
  }

  /** The files of a volume; undefined for a directory volume (emptyDir, hostPath). */
  private async contentOf(v: V1Volume, first: boolean): Promise<Map<string, File> | undefined> {
    if (v.emptyDir || v.hostPath) return undefined;
    const files = new Map<string, File>();
    if (v.configMap) {
      await this.objectFiles(
        files,
        v.name,
        'ConfigMap',
        v.configMap.name ?? '',
        v.configMap,
        v.configMap.defaultMode,
      );
    } else if (v.secret) {
      await this.objectFiles(
        files,
        v.name,
        'Secret',
        v.secret.secretName ?? '',
        v.secret,
        v.secret.defaultMode,
      );
    } else if (v.downwardAPI) {
      this.downward(files, v.downwardAPI.items ?? [], v.downwardAPI.defaultMode);
    } else if (v.projected) {
      for (const s of v.projected.sources ?? [])
        await this.projection(files, v.name, s, v.projected.defaultMode, first);
    }
    return files;
  }

  private async projection(
    files: Map<string, File>,
    volume: string,
    s: V1VolumeProjection,
    defaultMode: number | undefined,
    first: boolean,
  ): Promise<void> {
    if (s.configMap) {
      await this.objectFiles(files, volume, 'ConfigMap', s.configMap.name ?? '', s.configMap, defaultMode);
    } else if (s.secret) {
      await this.objectFiles(files, volume, 'Secret', s.secret.name ?? '', s.secret, defaultMode);
    } else if (s.downwardAPI) {
      this.downward(files, s.downwardAPI.items ?? [], defaultMode);
    } else if (s.serviceAccountToken) {
      const t = s.serviceAccountToken;
      const key = `${volume}/${t.path}`;
      const seconds = Math.max(600, t.expirationSeconds ?? TOKEN_SECONDS);
      let issued = this.issued.get(key);
      if (!issued || first || issued.renewAtMs <= this.ctx.now()) {
        const token = await this.ctx.tokens.token(t.audience, seconds);
        issued = { token, renewAtMs: this.ctx.now() + seconds * 800 };
        this.issued.set(key, issued);
      }
      files.set(t.path, { data: Buffer.from(issued.token), mode: defaultMode ?? DEFAULT_MODE });
    } else {
      throw new MountError(volume, `projected source ${Object.keys(s).join(', ')} is not supported here`);
    }
  }

  private async objectFiles(
    files: Map<string, File>,
    volume: string,
    kind: 'ConfigMap' | 'Secret',
    name: string,
    ref: { items?: V1KeyToPath[]; optional?: boolean },
    defaultMode: number | undefined,
  ): Promise<void> {
    const ns = this.ctx.pod.namespace;
    const obj = await (kind === 'ConfigMap'
      ? this.ctx.source.configMap(ns, name)
      : this.ctx.source.secret(ns, name));
    if (!obj) {
      if (ref.optional) return;
      throw new MountError(volume, `${kind.toLowerCase()} "${name}" not found`);
    }
    const data = dataOf(obj, kind);
    const text =
      kind === 'ConfigMap' ? new Set(Object.keys((obj as { data?: object }).data ?? {})) : new Set();
    const mode = defaultMode ?? DEFAULT_MODE;
    const items: V1KeyToPath[] = ref.items?.length
      ? ref.items
      : [...data.keys()].map((key) => ({ key, path: key }));
    for (const item of items) {
      const bytes = data.get(item.key);
      if (bytes === undefined) {
        if (ref.optional) continue;
        throw new MountError(volume, `configmap references non-existent config key: ${item.key}`);
      }
      const content = text.has(item.key)
        ? Buffer.from(this.ctx.paths.rewrite(bytes.toString('utf8')))
        : bytes;
      files.set(item.path, { data: content, mode: item.mode ?? mode });
    }
  }

  private downward(
    files: Map<string, File>,
    items: { path: string; fieldRef?: { fieldPath: string }; mode?: number }[],
    defaultMode: number | undefined,
  ): void {
    for (const item of items) {
      if (!item.fieldRef) continue;
      files.set(item.path, {
        data: Buffer.from(fieldValue(item.fieldRef, this.ctx.pod)),
        mode: item.mode ?? defaultMode ?? DEFAULT_MODE,
      });
    }
  }
}
