/**
 * `shiftstack kuryr gc`: lists the cloud objects kuryr made (every owner tag) that no KuryrPort,
 * KuryrNetwork or KuryrLoadBalancer names and no trunk carries, unchanged for `--min-age`; with
 * `--delete`, removes them. A dry run by default: nothing is deleted unless asked. Untagged objects
 * and referenced ones are never listed (src/kuryr/gc/orphans.ts says exactly what counts).
 *
 * The cloud comes from clouds.yaml / OS_* / an OCCM cloud.conf, as `shiftstack openstack` reads
 * it; the owner tags from `--resource-tag` (kuryr.conf's `[neutron_defaults] resource_tags`) or,
 * when none is given, the one tag naming the cluster (`--cluster-name`, kuryr's default cluster name
 * otherwise), as the controller tags. (kuryr-cmd's kuryr.conf loader will supply both; until it is
 * merged, the flags do.)
 * Exit codes: 0 listed (or all deleted), 1 a delete failed or the cloud/cluster failed, 2 bad input.
 */
import type { Command } from 'commander';
import { KubeClient, loadKubeConfig } from '../../kube/index.ts';
import { UsageError } from '../../lib/config.ts';
import { OpenStackClient, processContext, resolveCloudConfig } from '../../openstack/index.ts';
import { ownerTags } from '../../kuryr/api/index.ts';
import { defaultOptions } from '../../kuryr/options.ts';
import { deleteOrphans, readCloud } from '../../kuryr/gc/cloud.ts';
import { findOrphans, type Orphan } from '../../kuryr/gc/orphans.ts';
import { readReferences } from '../../kuryr/gc/references.ts';
import type { CliContext } from '../context.ts';
import { ExitCodeError } from '../context.ts';
import { durationFlag } from '../upstream-flags.ts';
import { withCloudOptions } from './openstack.ts';

interface GcFlags {
  kubeconfig?: string;
  osCloud?: string;
  cloudConfig?: string;
  cloudsYaml?: string;
  resourceTag?: string[];
  clusterName?: string;
  minAge: string;
  delete?: boolean;
  output: string;
}

export function configureKuryrGc(command: Command, ctx: CliContext): void {
  withCloudOptions(command)
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, then in-cluster)',
    )
    .option(
      '--resource-tag <tag>',
      "an owner tag, as kuryr.conf's [neutron_defaults] resource_tags (repeat for several; objects must carry all)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      '--cluster-name <name>',
      'without --resource-tag: the cluster whose default owner tag to look for',
    )
    .option(
      '--min-age <duration>',
      'leave objects changed more recently than this (a create not yet recorded)',
      '10m',
    )
    .option('--delete', 'delete what is listed (default: list only)')
    .option('-o, --output <format>', 'table or json', 'table')
    .action((flags: GcFlags) => gc(ctx, flags));
}

async function gc(ctx: CliContext, flags: GcFlags): Promise<void> {
  const minAgeMs = durationFlag('--min-age', flags.minAge);
  if (flags.output !== 'table' && flags.output !== 'json') {
    throw new UsageError(`--output: "${flags.output}" is not a format. Fix: write table or json`);
  }
  const tags = ownerTagsFromFlags(flags);
  const { config, warnings } = await resolveCloudConfig({
    ...processContext(ctx.signal),
    ...(flags.cloudConfig !== undefined ? { cloudConf: flags.cloudConfig } : {}),
    ...(flags.cloudsYaml !== undefined ? { cloudsYaml: flags.cloudsYaml } : {}),
    ...(flags.osCloud !== undefined ? { cloud: flags.osCloud } : {}),
  });
  for (const w of warnings) ctx.err(`warning: ${w}`);
  const kube = new KubeClient(loadKubeConfig(flags.kubeconfig), { userAgent: 'shiftstack-kuryr-gc' });
  const os = await OpenStackClient.fromConfig(config, { log: ctx.log(), signal: ctx.signal });
  try {
    const [cloud, refs] = await Promise.all([
      readCloud(os, tags, ctx.signal),
      readReferences(kube, ctx.signal),
    ]);
    const orphans = findOrphans(cloud, refs, { tags, nowMs: Date.now(), minAgeMs });
    if (!flags.delete) {
      print(
        ctx,
        flags.output,
        orphans.map((o) => ({ ...o })),
      );
      if (flags.output === 'table') {
        ctx.err(
          orphans.length === 0
            ? `no orphans tagged ${tags.join(',')}`
            : `${orphans.length} orphan(s); run again with --delete to remove them`,
        );
      }
      return;
    }
    const outcomes = await deleteOrphans(os, orphans, ctx.signal);
    print(
      ctx,
      flags.output,
      outcomes.map((r) => ({
        ...r.orphan,
        result: r.error === undefined ? 'deleted' : `failed: ${r.error}`,
      })),
    );
    const failed = outcomes.filter((r) => r.error !== undefined).length;
    if (failed > 0)
      throw new ExitCodeError(1, `${failed} of ${outcomes.length} orphan(s) could not be deleted`);
  } finally {
    await os.close();
  }
}

/** The owner tags to look for: the given ones, else the cluster's default tag. */
function ownerTagsFromFlags(flags: GcFlags): string[] {
  const given = flags.resourceTag ?? [];
  if (given.length > 0) return given;
  return ownerTags({ resourceTags: [], clusterName: flags.clusterName ?? defaultOptions().clusterName });
}

function print(ctx: CliContext, format: string, rows: (Orphan & { result?: string })[]): void {
  if (format === 'json') {
    ctx.out(JSON.stringify(rows, null, 2));
    return;
  }
  if (rows.length === 0) return;
  const cols = (r: Orphan & { result?: string }) => [r.kind, r.id, r.name || '-', r.result ?? r.reason];
  const header = ['KIND', 'ID', 'NAME', rows[0]!.result !== undefined ? 'RESULT' : 'REASON'];
  const table = [header, ...rows.map(cols)];
  const widths = header.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table) ctx.out(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}
