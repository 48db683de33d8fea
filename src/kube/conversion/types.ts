/**
 * What a conversion webhook knows of one kind: how to turn an object of any served version into
 * another. A part's `api/` folder declares these for its multi-version kinds (pure functions of
 * the object); the runtime's webhook server (served by the part's command) answers the API
 * server's ConversionReviews with them.
 */

/** An object as the API server sends it: any version of the kind, `apiVersion` and `kind` set. */
export type ConvertibleObject = Record<string, unknown> & { apiVersion: string; kind: string };

export interface KindConversion {
  group: string;
  kind: string;
  /** Every version this kind is served in, e.g. `['v1beta1', 'v1beta2']`. */
  versions: readonly string[];
  /**
   * `obj` in version `toVersion` (`apiVersion` = `<group>/<toVersion>`). Must be lossless across a
   * round trip (what one version cannot hold is kept in an annotation, as Cluster API does) and
   * must not change metadata other than that annotation. Throws `ConversionError` for an object
   * it cannot convert.
   */
  convert(obj: ConvertibleObject, toVersion: string): ConvertibleObject;
}

/** An object a conversion refuses: the API server reports the message to the client. */
export class ConversionError extends Error {
  override readonly name = 'ConversionError';
  readonly object: { kind: string; namespace?: string | undefined; name?: string | undefined };
  constructor(message: string, object: ConversionError['object']) {
    super(message);
    this.object = object;
  }
}
