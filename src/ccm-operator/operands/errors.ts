import type { OperandPlatform } from './types.ts';

/**
 * A render that cannot be done from its input (an image the platform needs is not in the images
 * map): upstream's "missed images in config". It names the platform and the key, so the operator's
 * condition and `render`'s message say what to add where.
 */
export class OperandRenderError extends Error {
  override readonly name = 'OperandRenderError';
  readonly platform: OperandPlatform;
  readonly key: string;
  constructor(platform: OperandPlatform, key: string, message: string) {
    super(message);
    this.platform = platform;
    this.key = key;
  }
}
