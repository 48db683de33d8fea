/**
 * Glance v2 as a namespace bound to one ServiceClient: `client.image.images.findByName('ubuntu', { signal })`.
 * The functions are exported too, for code that holds a ServiceClient (`getImage(sc, id)`).
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import {
  addImageTag,
  createImage,
  deleteImage,
  downloadImage,
  findImageByName,
  getImage,
  listImages,
  removeImageTag,
  updateImage,
  uploadImage,
  type ImageCreateOpts,
  type ImageData,
  type ImageListQuery,
  type ImagePatchOp,
} from './images.ts';
import { waitForImageActive, waitForImageDeleted, type WaiterOptions } from './waiters.ts';

export * from './images.ts';
export * from './waiters.ts';

export function imageV2(sc: ServiceClient) {
  return {
    client: sc,
    images: {
      list: (query?: ImageListQuery, o?: CallOptions) => listImages(sc, query, o),
      get: (id: string, o?: CallOptions) => getImage(sc, id, o),
      /** Exactly one image by that name, undefined for none; MultipleResultsError for several. */
      findByName: (name: string, o?: CallOptions & { query?: ImageListQuery | undefined }) =>
        findImageByName(sc, name, o),
      create: (image: ImageCreateOpts, o?: CallOptions) => createImage(sc, image, o),
      upload: (id: string, data: ImageData, o?: CallOptions) => uploadImage(sc, id, data, o),
      download: (id: string, o?: CallOptions) => downloadImage(sc, id, o),
      update: (id: string, ops: readonly ImagePatchOp[], o?: CallOptions) => updateImage(sc, id, ops, o),
      delete: (id: string, o?: CallOptions) => deleteImage(sc, id, o),
      addTag: (id: string, tag: string, o?: CallOptions) => addImageTag(sc, id, tag, o),
      removeTag: (id: string, tag: string, o?: CallOptions) => removeImageTag(sc, id, tag, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForActive: (id: string, o?: WaiterOptions) => waitForImageActive(sc, id, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForDeleted: (id: string, o?: WaiterOptions) => waitForImageDeleted(sc, id, o),
    },
  };
}

export type ImageV2 = ReturnType<typeof imageV2>;
