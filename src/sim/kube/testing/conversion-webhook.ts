/**
 * A small conversion webhook for tests of the emulator's webhook conversion: HTTPS with a
 * self-signed certificate, `POST /convert` answering ConversionReviews for `gadgets.example.com`
 * (v1 `spec.size` ↔ v2 `spec.dimensions.size`; what v1 cannot hold, v2's `spec.dimensions.unit`,
 * kept in an annotation so round trips lose nothing), and a `mode` a test switches to make it
 * misbehave as webhooks do. `gadgetCRD` declares the CRD that calls it.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCert } from '../../../lib/tls-cert.ts';

export type WebhookMode = 'ok' | 'fail' | 'rename' | 'wrong-version' | 'drop' | 'wrong-uid' | 'http-500';

export interface TestConversionWebhook {
  url: string;
  caPem: string;
  /** Every review received, in order. */
  reviews: { desiredAPIVersion: string; objects: any[]; reviewVersion: string }[];
  mode: WebhookMode;
  /** Reviews to this desired apiVersion wait for `until` before they are answered. */
  hold: { desiredAPIVersion: string; until: Promise<void> } | undefined;
  close(): Promise<void>;
}

const UNIT_ANNOTATION = 'example.com/v2-unit';

function convert(o: any, desired: string): any {
  const out = structuredClone(o);
  out.apiVersion = desired;
  const spec = out.spec ?? {};
  if (desired === 'example.com/v2' && o.apiVersion === 'example.com/v1') {
    const { size, ...rest } = spec;
    const unit = o.metadata?.annotations?.[UNIT_ANNOTATION];
    out.spec = {
      ...rest,
      dimensions: { ...(size !== undefined ? { size } : {}), ...(unit ? { unit } : {}) },
    };
    if (unit) {
      delete out.metadata.annotations[UNIT_ANNOTATION];
      if (Object.keys(out.metadata.annotations).length === 0) delete out.metadata.annotations;
    }
  } else if (desired === 'example.com/v1' && o.apiVersion === 'example.com/v2') {
    const { dimensions, ...rest } = spec;
    out.spec = { ...rest, ...(dimensions?.size !== undefined ? { size: dimensions.size } : {}) };
    if (dimensions?.unit) {
      out.metadata ??= {};
      out.metadata.annotations = { ...(out.metadata.annotations ?? {}), [UNIT_ANNOTATION]: dimensions.unit };
    }
  }
  return out;
}

export async function startConversionWebhook(): Promise<TestConversionWebhook> {
  const cert = selfSignedCert({
    commonName: 'test-conversion-webhook',
    hosts: ['127.0.0.1', 'localhost', 'gadget-webhook.default.svc'],
  });
  const hook: TestConversionWebhook = {
    url: '',
    caPem: cert.certPem,
    reviews: [],
    mode: 'ok',
    hold: undefined,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer());
    const answer = async () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const { uid, desiredAPIVersion, objects } = review.request;
      hook.reviews.push({ desiredAPIVersion, objects, reviewVersion: review.apiVersion });
      const hold = hook.hold;
      if (hold && hold.desiredAPIVersion === desiredAPIVersion) await hold.until;
      if (hook.mode === 'http-500') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('webhook crashed');
        return;
      }
      let converted = objects.map((o: any) => convert(o, desiredAPIVersion));
      let result: any = { status: 'Success' };
      if (hook.mode === 'fail') result = { status: 'Failure', message: 'spec.size cannot be converted' };
      if (hook.mode === 'rename')
        converted = converted.map((o: any) => ({ ...o, metadata: { ...o.metadata, name: 'renamed' } }));
      if (hook.mode === 'wrong-version')
        converted = converted.map((o: any) => ({ ...o, apiVersion: 'example.com/v9' }));
      if (hook.mode === 'drop') converted = converted.slice(1);
      const body = JSON.stringify({
        apiVersion: review.apiVersion,
        kind: 'ConversionReview',
        response: {
          uid: hook.mode === 'wrong-uid' ? 'not-the-uid' : uid,
          result,
          convertedObjects: converted,
        },
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/convert`;
  return hook;
}

function gadgetSchema(version: 'v1' | 'v2'): any {
  const spec =
    version === 'v1'
      ? { size: { type: 'integer', minimum: 1 }, color: { type: 'string', default: 'red' } }
      : {
          dimensions: {
            type: 'object',
            properties: { size: { type: 'integer', minimum: 1 }, unit: { type: 'string', default: 'cm' } },
          },
          color: { type: 'string', default: 'red' },
        };
  return {
    openAPIV3Schema: {
      type: 'object',
      properties: {
        spec: { type: 'object', properties: spec },
        status: { type: 'object', properties: { phase: { type: 'string' } } },
      },
    },
  };
}

/** gadgets.example.com: v1 and v2 served, `storage` stored, converted by the webhook at `clientConfig`. */
export function gadgetCRD(
  clientConfig: Record<string, unknown>,
  opts: { storage?: 'v1' | 'v2'; reviewVersions?: string[] } = {},
): any {
  const storage = opts.storage ?? 'v1';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      conversion: {
        strategy: 'Webhook',
        webhook: { clientConfig, conversionReviewVersions: opts.reviewVersions ?? ['v1', 'v1beta1'] },
      },
      versions: (['v1', 'v2'] as const).map((name) => ({
        name,
        served: true,
        storage: name === storage,
        subresources: { status: {} },
        schema: gadgetSchema(name),
      })),
    },
  };
}

/** The clientConfig of a webhook served by {@link startConversionWebhook}. */
export function urlClientConfig(hook: TestConversionWebhook): Record<string, unknown> {
  return { url: hook.url, caBundle: Buffer.from(hook.caPem).toString('base64') };
}
