/**
 * The operands' images: upstream's `images.json` (a JSON object from image key to image
 * reference: `cloudControllerManagerOpenStack`, `cloudControllerManagerAWS`, …), laid over
 * DEFAULT_IMAGES. One reader for every place it comes from — the images ConfigMap read from the
 * API, the operator's `--images-json` file (the ConfigMap mounted), `render --images` (the file or
 * the ConfigMap saved as YAML) — so the operator and `render` run the same images for the same
 * document. Problems name the file or ConfigMap and the key; keys no operand uses are returned, to
 * be reported, never silently dropped.
 */
import { z } from 'zod';
import { ConfigError, loadConfigFile, parseConfig } from '../lib/config.ts';
import { IMAGES_KEY } from './api/names.ts';
import { DEFAULT_IMAGES, IMAGE_KEYS } from './operands/images.ts';

export type Images = Readonly<Record<string, string>>;

export interface ImagesRead {
  /** The document's images over DEFAULT_IMAGES. */
  images: Images;
  /** Keys of the document no operand uses (upstream's ConfigMap has some). */
  unknownKeys: string[];
}

const REFERENCE = 'write the image reference, e.g. quay.io/org/image:tag';
const imageMap = z.record(z.string(), z.string({ error: REFERENCE }).min(1, { error: REFERENCE }));

/** An images file: upstream's images.json itself, or the cloud-controller-manager-images ConfigMap holding it. */
const imagesDocument = z.union(
  [
    z.looseObject({
      kind: z.literal('ConfigMap'),
      data: z.looseObject({}, { error: `put the images map, as JSON, under data."${IMAGES_KEY}"` }),
    }),
    imageMap,
  ],
  {
    error: `not an images map: write a JSON object from image key to image reference, or the ConfigMap holding one under data."${IMAGES_KEY}"`,
  },
);

/** images.json's text; `file` names where it was read (a file, a ConfigMap), `key` where in it. */
export function imagesFromJson(text: string, file: string, key = ''): ImagesRead {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError([
      {
        file,
        key,
        value: undefined,
        problem: `not JSON (${(err as Error).message})`,
        fix: 'write the images map as a JSON object, e.g. {"shiftstack": "registry.example/shiftstack:v1"}',
      },
    ]);
  }
  return overDefaults(parseConfig(imageMap, parsed, key ? `${file} ${key}` : file));
}

function overDefaults(map: Readonly<Record<string, string>>): ImagesRead {
  const known = IMAGE_KEYS as readonly string[];
  return {
    images: { ...DEFAULT_IMAGES, ...map },
    unknownKeys: Object.keys(map).filter((k) => !known.includes(k)),
  };
}

/** The images of a ConfigMap's data (`where` names the ConfigMap): its images.json key is required. */
export function imagesFromConfigMap(
  data: Readonly<Record<string, string>> | undefined,
  where: string,
): ImagesRead {
  const text: unknown = data?.[IMAGES_KEY];
  if (typeof text !== 'string') {
    throw new ConfigError([
      {
        file: where,
        key: `data.${IMAGES_KEY}`,
        value: text,
        problem: text === undefined ? 'missing' : 'not the images map as JSON text',
        fix: `put the images map, as JSON, under data."${IMAGES_KEY}" (or delete the ConfigMap to run the default images)`,
      },
    ]);
  }
  return imagesFromJson(text, where, `data.${IMAGES_KEY}`);
}

/**
 * The images of an images file (images.json, or the ConfigMap holding it, as YAML or JSON);
 * `flag`, the command-line flag that named the file, leads its problems.
 */
export async function readImagesFile(
  file: string,
  o: { flag?: string; signal?: AbortSignal } = {},
): Promise<ImagesRead> {
  try {
    const doc = await loadConfigFile(file, imagesDocument, o.signal ? { signal: o.signal } : {});
    if (doc.kind === 'ConfigMap' && typeof doc.data === 'object') {
      return imagesFromConfigMap(doc.data as Record<string, string>, file);
    }
    return overDefaults(doc as Record<string, string>);
  } catch (err) {
    if (!o.flag || !ConfigError.is(err)) throw err;
    const flag = o.flag;
    throw new ConfigError(
      err.problems.map((p) => ({ ...p, file: `${flag} ${p.file}` })),
      err.warnings,
    );
  }
}

/** What to say about keys no operand uses (`where`: the file or ConfigMap). */
export function unknownImageKeysWarnings(read: ImagesRead, where: string): string[] {
  return read.unknownKeys.map((k) => `${where}: key "${k}" is not an image any operand uses; it is ignored`);
}
