/**
 * The part of the OpenStack client the server path uses. `OpenStackClient` satisfies it; naming the
 * narrow shape lets a test put a recorder or a "kill after k writes" wrapper in between.
 */
import type { BlockStorageV3 } from '../../blockstorage/v3/index.ts';
import type { ComputeV2 } from '../../compute/v2/index.ts';
import type { ImageV2 } from '../../image/v2/index.ts';
import type { NetworkV2 } from '../../network/v2/index.ts';

export interface ServerApi {
  readonly compute: ComputeV2;
  readonly network: NetworkV2;
  readonly blockStorage: BlockStorageV3;
  readonly image: ImageV2;
}
