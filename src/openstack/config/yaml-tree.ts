/**
 * Parsed YAML whose leaves remember the file they came from, so that after secure.yaml is merged
 * over clouds.yaml an error about a value still names the file that holds it.
 */
export type YamlNode =
  | { kind: 'leaf'; value: unknown; file: string }
  | { kind: 'map'; entries: Map<string, YamlNode>; file: string };

/** Keys are normalized from `-` to `_`, as openstacksdk does for every clouds.yaml key. */
export function toYamlNode(value: unknown, file: string): YamlNode {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { kind: 'leaf', value, file };
  const entries = new Map<string, YamlNode>();
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    entries.set(k.replace(/-/g, '_'), toYamlNode(v, file));
  }
  return { kind: 'map', entries, file };
}

/** openstacksdk's merge_clouds: maps merge key by key, anything else in `over` replaces `base`. */
export function mergeYamlNodes(base: YamlNode, over: YamlNode): YamlNode {
  if (base.kind !== 'map' || over.kind !== 'map') return over;
  const entries = new Map(base.entries);
  for (const [k, v] of over.entries) {
    const old = entries.get(k);
    entries.set(k, old ? mergeYamlNodes(old, v) : v);
  }
  return { kind: 'map', entries, file: base.file };
}

/** Null and empty strings mean "not set", as they do to openstacksdk and gophercloud. */
export function isUnset(node: YamlNode | undefined): boolean {
  return node === undefined || (node.kind === 'leaf' && (node.value === null || node.value === ''));
}
