/**
 * The bootstrap data of an OpenStackServer: the Secret its `userDataRef` names, key `value`, as
 * Cluster API's bootstrap providers write it (CAPO's getUserData). Until it exists the server waits:
 * a bootstrap provider writes it a moment after the machine appears.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { secretValue, type ObjectReader } from '../identity.ts';

export const USER_DATA_KEY = 'value';

export type UserData = { ready: true; value: string | undefined } | { ready: false; message: string };

export async function readUserData(
  reader: ObjectReader,
  namespace: string,
  ref: { name?: string | undefined } | undefined,
  signal?: AbortSignal,
): Promise<UserData> {
  if (!ref?.name) return { ready: true, value: undefined };
  const secret = await reader.get<V1Secret>(kinds.Secret, { namespace, name: ref.name }, { signal });
  if (!secret)
    return { ready: false, message: `waiting for the bootstrap data Secret ${namespace}/${ref.name}` };
  const value = secretValue(secret, USER_DATA_KEY);
  if (value === undefined) {
    return {
      ready: false,
      message: `the bootstrap data Secret ${namespace}/${ref.name} has no key ${USER_DATA_KEY} yet`,
    };
  }
  return { ready: true, value };
}
