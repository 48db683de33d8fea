/**
 * clusterctl's provider contract for `shiftstack capo`: the release files clusterctl reads to
 * install the provider and to generate clusters, kept as a clusterctl local repository
 * (`{basepath}/{provider-label}/{version}/`) under deploy/clusterctl, so a clusterctl.yaml entry with
 * a `file://` URL to its infrastructure-components.yaml is all clusterctl needs (docs/capo.md).
 *
 * infrastructure-components.yaml is not written by hand: it is deploy/capo as `kubectl apply -k`
 * installs it (the kustomization's resources and labels, read here as kustomize reads them), with
 * the settings clusterctl users set through variables turned into `${VAR:=default}` where CAPO's
 * own components offer them. `npm run gen:clusterctl` writes it; clusterctl.test.ts fails when it
 * is stale.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';

/** The provider's name in clusterctl, `<type>-<name>`: the label on every object and the repository folder. */
export const PROVIDER_LABEL = 'infrastructure-openstack';
export const PROVIDER_LABEL_KEY = 'cluster.x-k8s.io/provider';

/** Where the local repository's releases live, from the repository root. */
export const REPOSITORY_DIR = join('deploy', 'clusterctl', PROVIDER_LABEL);
export const COMPONENTS_FILE = 'infrastructure-components.yaml';
export const METADATA_FILE = 'metadata.yaml';
/** What the components are made of. */
export const KUSTOMIZATION_DIR = join('deploy', 'capo');

export type Manifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

/** A kustomization field this reader does not implement: refused, so nothing is silently left out. */
export class UnsupportedKustomizationError extends Error {
  override readonly name = 'UnsupportedKustomizationError';
  constructor(file: string, field: string) {
    super(
      `${file}: "${field}" is not read by scripts/gen-clusterctl.ts (resources, labels, commonLabels and namespace are); ` +
        'teach src/capo/clusterctl/components.ts to build it before using it',
    );
  }
}

interface Kustomization {
  resources?: string[];
  labels?: { pairs: Record<string, string>; includeSelectors?: boolean; includeTemplates?: boolean }[];
  commonLabels?: Record<string, string>;
  namespace?: string;
}

const READ = new Set(['apiVersion', 'kind', 'resources', 'labels', 'commonLabels', 'namespace']);

async function documents(file: string): Promise<Manifest[]> {
  return parseAllDocuments(await readFile(file, 'utf8'))
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
      return d.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'ClusterIssuer',
]);

/** Labels on an object, and where kustomize also puts them: selectors and pod templates. */
function addLabels(
  obj: Manifest,
  pairs: Record<string, string>,
  selectors: boolean,
  templates: boolean,
): void {
  obj.metadata.labels = { ...obj.metadata.labels, ...pairs };
  const spec = obj.spec as
    | {
        selector?: { matchLabels?: Record<string, string> };
        template?: { metadata?: { labels?: Record<string, string> } };
      }
    | undefined;
  if (!spec || !['Deployment', 'DaemonSet', 'StatefulSet', 'ReplicaSet', 'Service'].includes(obj.kind))
    return;
  if (selectors && obj.kind === 'Service') {
    (obj.spec as { selector?: Record<string, string> }).selector = {
      ...(obj.spec as { selector?: Record<string, string> }).selector,
      ...pairs,
    };
    return;
  }
  if (selectors)
    spec.selector = { ...spec.selector, matchLabels: { ...spec.selector?.matchLabels, ...pairs } };
  if ((selectors || templates) && spec.template) {
    spec.template.metadata = {
      ...spec.template.metadata,
      labels: { ...spec.template.metadata?.labels, ...pairs },
    };
  }
}

/**
 * The objects `kubectl apply -k <dir>` creates, in the kustomization's order: each resource file
 * (or directory with its own kustomization), then the kustomization's labels and namespace.
 */
export async function buildKustomization(dir: string): Promise<Manifest[]> {
  const file = join(dir, 'kustomization.yaml');
  const k = parse(await readFile(file, 'utf8')) as Kustomization & Record<string, unknown>;
  for (const field of Object.keys(k))
    if (!READ.has(field)) throw new UnsupportedKustomizationError(file, field);
  const out: Manifest[] = [];
  for (const r of k.resources ?? []) {
    const path = join(dir, r);
    out.push(
      ...(r.endsWith('.yaml') || r.endsWith('.yml') ? await documents(path) : await buildKustomization(path)),
    );
  }
  for (const obj of out) {
    for (const l of k.labels ?? [])
      addLabels(obj, l.pairs, l.includeSelectors ?? false, l.includeTemplates ?? false);
    if (k.commonLabels) addLabels(obj, k.commonLabels, true, true);
    if (k.namespace && !CLUSTER_SCOPED.has(obj.kind)) obj.metadata.namespace = k.namespace;
  }
  return out;
}

/**
 * The manager's flags clusterctl users set through variables, with the names CAPO's components
 * give them; the default is what deploy/capo says.
 */
export const MANAGER_FLAG_VARIABLES: Readonly<Record<string, string>> = {
  '--diagnostics-address': 'CAPO_DIAGNOSTICS_ADDRESS',
  '--insecure-diagnostics': 'CAPO_INSECURE_DIAGNOSTICS',
};

interface Container {
  name: string;
  args?: string[];
}

function withVariables(objects: readonly Manifest[]): Manifest[] {
  return objects.map((obj) => {
    if (obj.kind !== 'Deployment') return obj;
    const copy = structuredClone(obj);
    const pod = (copy.spec as { template: { spec: { containers: Container[] } } }).template.spec;
    for (const c of pod.containers) {
      c.args = c.args?.map((arg) => {
        const eq = arg.indexOf('=');
        const variable = eq > 0 ? MANAGER_FLAG_VARIABLES[arg.slice(0, eq)] : undefined;
        return variable ? `${arg.slice(0, eq)}=\${${variable}:=${arg.slice(eq + 1)}}` : arg;
      });
    }
    return copy;
  });
}

/** infrastructure-components.yaml's text, from the repository at `root`. */
export async function infrastructureComponents(root: string): Promise<string> {
  const objects = withVariables(await buildKustomization(join(root, KUSTOMIZATION_DIR)));
  // No `${` in the header: clusterctl reads variables in comments too.
  const header =
    '# Generated from deploy/capo by scripts/gen-clusterctl.ts (npm run gen:clusterctl). Do not edit.\n' +
    `# \`clusterctl init\` substitutes ${Object.values(MANAGER_FLAG_VARIABLES).join(' and ')}; each has a default.\n`;
  return header + objects.map((o) => stringify(o, { lineWidth: 0, singleQuote: true })).join('---\n');
}

/** The release folder of `version` (package.json's, without the v) in the local repository. */
export function releaseDir(version: string): string {
  return join(REPOSITORY_DIR, `v${version}`);
}

/** shiftstack's version, the local repository's release. */
export async function packageVersion(root: string): Promise<string> {
  return (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Where infrastructure-components.yaml goes for the checkout at `root`. */
export async function componentsPath(root: string): Promise<string> {
  return join(releaseDir(await packageVersion(root)), COMPONENTS_FILE);
}
