/**
 * The operands' images: upstream's `images.json` (the ConfigMap cloud-controller-manager-images,
 * mounted as a file, or read from the API), a JSON object from image key to image reference
 * (`cloudControllerManagerOpenStack`, `cloudControllerManagerAWS`, …).
 */
export type Images = Readonly<Record<string, string>>;

export type ImagesRead = { ok: true; images: Images } | { ok: false; problem: string };

export function parseImages(text: string, where: string): ImagesRead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return {
      ok: false,
      problem: `${where} is not JSON (${(err as Error).message}): write a JSON object from image key to image`,
    };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problem: `${where} is not a JSON object: write one from image key to image` };
  }
  const images: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') return { ok: false, problem: `${where}: the image of ${k} is not a string` };
    images[k] = v;
  }
  return { ok: true, images };
}
