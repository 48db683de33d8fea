/**
 * The operand renderers' entry point. On this branch (h/op-core) no platform renderer exists
 * yet: the op-render branch's index.ts, with every platform's, replaces this file whole when it
 * is merged. Until then the operator reports each platform as one it cannot render (Degraded,
 * with this message) and tests use src/ccm-operator/testing/renderer.ts.
 */
import type { RenderedOperands, RenderInput } from './types.ts';

export * from './types.ts';
export * from './labels.ts';

export function renderOperands(input: RenderInput): RenderedOperands {
  throw new Error(`this build has no operand renderer for platform ${input.platform}`);
}
