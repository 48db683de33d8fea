/**
 * The runner's one liberty with a container's view of files. Pods share the host's file system,
 * so a volume mounted at `/etc/openstack/config` is materialized at `<pod root>/etc/openstack/config`,
 * and every container path the process is told about must say so: the args, the env values and
 * the text files of mounted ConfigMaps (cloud.conf names `clouds-file =
 * /etc/openstack/secret/clouds.yaml`) have each mount path rewritten to the pod root. The longest
 * mount path wins (`/etc/a/b` over `/etc/a`); a path is rewritten only where it starts (after a
 * space, `=`, `:`, `,`, `;`, a quote or a bracket) and ends (at `/`, the end, or one of those).
 */
import { join, posix } from 'node:path';

export class PodPaths {
  readonly root: string;
  private readonly pattern: RegExp | undefined;

  constructor(root: string, mountPaths: Iterable<string>) {
    this.root = root;
    const paths = [...new Set([...mountPaths].map(normalize))]
      .filter((p) => p !== '/')
      .sort((a, b) => b.length - a.length);
    this.pattern = paths.length
      ? new RegExp(`(^|[\\s=:,;'"(\\[])(${paths.map(escape).join('|')})(?=$|[/\\s,:;'")\\]])`, 'g')
      : undefined;
  }

  /** Where a container path lives on the host. */
  hostPath(containerPath: string): string {
    return join(this.root, normalize(containerPath));
  }

  /** `text` with every mount path in it moved under the pod root. */
  rewrite(text: string): string {
    if (!this.pattern) return text;
    return text.replace(this.pattern, (_m, before: string, path: string) => before + this.hostPath(path));
  }
}

function normalize(p: string): string {
  const n = posix.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
