/**
 * The Cinder microversion of a client, negotiated once: 3.42 (extending an attached volume, which
 * CSI resize needs) or the cloud's maximum if lower. Without a header Cinder answers as 3.0.
 */
import { negotiatedMicroversion } from '../../core/microversion.ts';

export const BLOCK_STORAGE_MICROVERSION = '3.42';

/** The microversion calls on `sc` use: the one set on it, else negotiated once (single-flight per ServiceClient). */
export const blockStorageMicroversion = negotiatedMicroversion(BLOCK_STORAGE_MICROVERSION);
