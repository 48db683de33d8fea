/**
 * `shiftstack openstack whoami|catalog|token`: checks a cloud config the way every shiftstack part
 * will read it, and shows what it resolved to. Config errors exit 2 with the file, key and fix;
 * authentication and connection errors exit 1 with the auth URL, the identity and what to check.
 */
import type { Command } from 'commander';
import {
  ApiVersionError,
  AuthenticationError,
  ConnectionError,
  EndpointNotFoundError,
  OpenStackClient,
  OpenStackHttpError,
  processContext,
  resolveCloudConfig,
  type CachedToken,
  type CatalogService,
  type CloudConfig,
  type KeystoneToken,
} from '../../openstack/index.ts';
import type { CliContext } from '../context.ts';

interface CloudOptions {
  osCloud?: string;
  cloudConfig?: string;
  cloudsYaml?: string;
}

/** The services whose endpoint `whoami` resolves, in the order shiftstack's parts use them. */
const SERVICES = ['identity', 'compute', 'network', 'load-balancer', 'image', 'block-storage', 'placement'];

/** `shiftstack openstack`'s flags and action, on the command main.ts made (name and description). */
export function configureOpenstack(command: Command, ctx: CliContext): void {
  const os = command;

  withCloudOptions(
    os
      .command('whoami')
      .description('authenticate and print the identity, scope, endpoints and API versions'),
  ).action((opts: CloudOptions) => run(ctx, opts, whoami));

  withCloudOptions(
    os.command('catalog').description('authenticate and print every endpoint of the catalog'),
  ).action((opts: CloudOptions) => run(ctx, opts, catalog));

  withCloudOptions(os.command('token').description('authenticate and print the token expiry and scope'))
    .option('--show-token', 'print the token itself too (it grants access: keep it out of logs)')
    .action((opts: CloudOptions & { showToken?: boolean }) =>
      run(ctx, opts, (c, client, token) => printToken(c, client, token, opts.showToken === true)),
    );
}

export function withCloudOptions(cmd: Command): Command {
  return cmd
    .option('--os-cloud <name>', 'the clouds.yaml cloud to use (default: OS_CLOUD)')
    .option('--cloud-config <file>', 'an OCCM cloud.conf to read instead of clouds.yaml and OS_* variables')
    .option('--clouds-yaml <file>', 'the clouds.yaml to read instead of searching for one');
}

type Action = (ctx: CliContext, client: OpenStackClient, token: CachedToken) => Promise<void> | void;

async function run(ctx: CliContext, opts: CloudOptions, action: Action): Promise<void> {
  // ConfigError propagates: main prints it and exits 2.
  const { config, warnings } = await resolveCloudConfig({
    ...processContext(ctx.signal),
    ...(opts.cloudConfig !== undefined ? { cloudConf: opts.cloudConfig } : {}),
    ...(opts.cloudsYaml !== undefined ? { cloudsYaml: opts.cloudsYaml } : {}),
    ...(opts.osCloud !== undefined ? { cloud: opts.osCloud } : {}),
  });
  for (const w of warnings) ctx.err(`warning: ${w}`);
  const client = await OpenStackClient.fromConfig(config, { log: ctx.log(), signal: ctx.signal });
  try {
    let token: CachedToken;
    try {
      token = await client.session.token(ctx.signal);
    } catch (err) {
      throw reported(ctx, authFailure(config, err), err);
    }
    await action(ctx, client, token);
  } finally {
    await client.close();
  }
}

/** The one-paragraph account of a failed authentication, or undefined for errors main should report itself. */
function authFailure(config: CloudConfig, err: unknown): string | undefined {
  if (AuthenticationError.is(err)) return err.message;
  if (ConnectionError.is(err)) {
    return `cannot reach Keystone at ${config.authUrl}: ${err.message}. Fix: check the auth URL, and that the service runs and is reachable from here`;
  }
  if (OpenStackHttpError.is(err)) return `Keystone at ${config.authUrl} failed: ${err.message}`;
  return undefined;
}

/**
 * main logs any error and exits 1. An error whose story was already told on stderr gets a stack of
 * one line, so the log does not bury the message under frames that help nobody.
 */
function reported(ctx: CliContext, message: string | undefined, cause?: unknown): unknown {
  if (message === undefined) return cause;
  ctx.err(`shiftstack: ${message}`);
  const err = new Error('openstack: could not authenticate (see above)');
  err.stack = `Error: ${err.message}`;
  return err;
}

async function whoami(ctx: CliContext, client: OpenStackClient, token: CachedToken): Promise<void> {
  const { config } = client;
  const t = token.token;
  const rows: [string, string][] = [
    ['auth URL', config.authUrl],
    ['auth type', config.authType],
    ['user', ref(t.user)],
    ['scope', scope(t)],
    ['roles', (t.roles ?? []).map((r) => r.name).join(', ') || '(none)'],
    ['region', config.regionName ?? '(not set: the catalog must have one region)'],
    ['interface', config.interface],
    ['config', source(config)],
    ['token expires', expiry(token)],
  ];
  ctx.out(table(rows));
  ctx.out('endpoints:');
  const endpoints: [string, string][] = [];
  for (const type of SERVICES) {
    try {
      endpoints.push([type, await client.session.endpoint(type, { signal: ctx.signal })]);
    } catch (err) {
      if (!EndpointNotFoundError.is(err)) throw err;
      endpoints.push([
        type,
        `(none for interface ${config.interface}${config.regionName ? `, region ${config.regionName}` : ''})`,
      ]);
    }
  }
  ctx.out(table(endpoints, '  '));
  const found = new Set(endpoints.filter(([, url]) => !url.startsWith('(')).map(([type]) => type));
  const versions: [string, string][] = [];
  if (found.has('compute'))
    versions.push(['compute', `microversions ${await apiRange(ctx, client, 'compute')}`]);
  if (found.has('load-balancer'))
    versions.push(['load-balancer', `API versions ${await apiRange(ctx, client, 'load-balancer')}`]);
  if (versions.length > 0) {
    ctx.out('API versions:');
    ctx.out(table(versions, '  '));
  }
}

async function apiRange(ctx: CliContext, client: OpenStackClient, type: string): Promise<string> {
  try {
    return (await client.serviceClient(type).discover(ctx.signal)).toString();
  } catch (err) {
    if (ApiVersionError.is(err) || OpenStackHttpError.is(err) || ConnectionError.is(err))
      return `unknown (${err.message})`;
    throw err;
  }
}

function catalog(ctx: CliContext, client: OpenStackClient, token: CachedToken): void {
  const services: CatalogService[] = [...(token.token.catalog ?? [])].sort((a, b) =>
    a.type.localeCompare(b.type),
  );
  if (services.length === 0) {
    ctx.out('the token has no catalog (an unscoped token, or a scope without endpoints)');
    return;
  }
  const rows: string[][] = [['TYPE', 'NAME', 'INTERFACE', 'REGION', 'URL']];
  for (const s of services) {
    for (const e of [...s.endpoints].sort((a, b) => a.interface.localeCompare(b.interface))) {
      rows.push([s.type, s.name ?? '', e.interface, e.region_id ?? e.region ?? '', e.url]);
    }
  }
  ctx.out(columns(rows));
  for (const [type, url] of Object.entries(client.config.endpointOverride))
    ctx.out(`override: ${type} → ${url}`);
}

function printToken(ctx: CliContext, client: OpenStackClient, token: CachedToken, show: boolean): void {
  const t = token.token;
  const rows: [string, string][] = [
    ['expires', expiry(token)],
    ['issued', t.issued_at],
    ['user', ref(t.user)],
    ['scope', scope(t)],
    ['methods', t.methods.join(', ')],
    ['auth URL', client.config.authUrl],
  ];
  if (show) rows.push(['token', token.value]);
  ctx.out(table(rows));
  if (!show) ctx.out('(the token itself is printed with --show-token)');
}

function ref(r: { id: string; name?: string; domain?: { id: string; name?: string } } | undefined): string {
  if (!r) return '(none)';
  const domain = r.domain ? `, domain ${r.domain.name ?? r.domain.id}` : '';
  return `${r.name ?? r.id} (id ${r.id}${domain})`;
}

function scope(t: KeystoneToken): string {
  if (t['OS-TRUST:trust']) return `trust ${t['OS-TRUST:trust'].id}, project ${ref(t.project)}`;
  if (t.application_credential)
    return `project ${ref(t.project)} (application credential ${t.application_credential.id})`;
  if (t.project) return `project ${ref(t.project)}`;
  if (t.domain) return `domain ${t.domain.name ?? t.domain.id} (id ${t.domain.id})`;
  if (t.system) return 'system';
  return 'unscoped';
}

function source(config: CloudConfig): string {
  const s = config.source;
  const cloud = s.cloud ? ` cloud "${s.cloud}"` : '';
  const files = s.files.length > 0 ? `: ${s.files.join(', ')}` : '';
  const env = s.env.length > 0 ? `; variables ${s.env.join(', ')}` : '';
  return `${s.kind}${cloud}${files}${env}`;
}

function expiry(token: CachedToken): string {
  const minutes = Math.round((token.expiresAt - Date.now()) / 60_000);
  const left = minutes >= 120 ? `${Math.round(minutes / 6) / 10} h` : `${minutes} min`;
  return `${token.token.expires_at} (in ${left})`;
}

function table(rows: readonly [string, string][], indent = ''): string {
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${indent}${`${k}:`.padEnd(width + 1)} ${v}`).join('\n');
}

function columns(rows: readonly string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '))
    .join('\n');
}
