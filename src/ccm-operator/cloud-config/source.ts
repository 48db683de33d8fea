/**
 * Which text of the source ConfigMap is the cloud config (upstream's prepareSourceConfigMap):
 * `cloud.conf` if the ConfigMap has that key, else the key the Infrastructure names
 * (`spec.cloudConfig.key`), else none. The synced ConfigMap keeps the source's other keys (the
 * installer's `ca-bundle.pem` among them) with the cloud config under `cloud.conf`.
 */
import { CLOUD_CONF_KEY } from '../api/names.ts';
import type { CloudConfigProblem } from './transform.ts';

export interface CloudConfigSource {
  /** The cloud config text ('' when the ConfigMap has none). */
  text: string;
  /** The other keys, copied as they are. */
  rest: Record<string, string>;
}

export function cloudConfigSource(
  data: Readonly<Record<string, string>> | undefined,
  infraKey: string | undefined,
  where: string,
): CloudConfigSource | CloudConfigProblem {
  const all = { ...data };
  if (CLOUD_CONF_KEY in all) {
    const { [CLOUD_CONF_KEY]: text = '', ...rest } = all;
    return { text, rest };
  }
  if (infraKey) {
    if (!(infraKey in all)) {
      return {
        problem: `the key ${infraKey} that Infrastructure cluster names (spec.cloudConfig.key) is not in ${where}`,
        fix: `add the cloud config under ${infraKey} in ${where}, or set spec.cloudConfig.key of Infrastructure cluster to the key that holds it`,
      };
    }
    const { [infraKey]: text = '', ...rest } = all;
    return { text, rest };
  }
  return { text: '', rest: all };
}
