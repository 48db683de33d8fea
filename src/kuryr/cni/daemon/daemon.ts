/**
 * kuryr-daemon on one node: the KuryrPort watch of that node, the plugin's endpoint
 * (`[cni_daemon] bind_address`), the exporter (`[prometheus_exporter] cni_exporter_port`, 9655) and
 * the health server (`[cni_health_server] port`, 8090): ready once the KuryrPort cache
 * has synced, alive while `ip` answers (upstream's liveness asks its netlink library the same).
 */
import type { Logger } from '../../../lib/log.ts';
import { UsageError } from '../../../lib/config.ts';
import type { Registry } from '../../../lib/metrics.ts';
import { startHealthServer } from '../../../lib/health-server.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { KubeClient } from '../../../kube/index.ts';
import { VETH_BINDING, VLAN_BINDING, type KuryrOptions } from '../../options.ts';
import { Ip } from '../binding/ip.ts';
import type { BindingDriver } from '../binding/types.ts';
import { VethBinding } from '../binding/veth.ts';
import { VlanBinding } from '../binding/vlan.ts';
import { KuryrCniHandler } from './handler.ts';
import { KuryrPortWatch } from './kuryrports.ts';
import { daemonMetrics } from './metrics.ts';
import { startDaemonServer } from './server.ts';

/** Upstream's `[cni_daemon] worker_num`: requests served at once. */
export const DAEMON_WORKERS = 30;

export interface KuryrDaemonOptions {
  client: KubeClient;
  nodeName: string;
  options: KuryrOptions;
  log: Logger;
  registry: Registry;
  /** The `ip` runner (tests: one whose host is a namespace). */
  ip?: Ip;
  clock?: Clock;
  /** Over `[cni_daemon] bind_address` (tests: port 0). */
  bindAddress?: string;
  /** Over `[prometheus_exporter] cni_exporter_port` (tests: 0); the exporter listens on every address, as upstream's. */
  exporterPort?: number;
  /** Over `[cni_health_server] port` (tests: 0). */
  healthPort?: number;
  /** Where the exporter and the health server listen; every address by default, as upstream's. */
  exporterHost?: string;
  workers?: number;
}

export interface RunningDaemon {
  /** The plugin's endpoint (`daemon_url`). */
  url: string;
  /** `/metrics`. */
  exporterUrl: string;
  /** `/healthz`, `/readyz`. */
  healthUrl: string;
  ports: KuryrPortWatch;
  binding: BindingDriver;
  /** Settles when the KuryrPort watch ends (after stop, or on a failure). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** The binding `[binding] default_driver` names, configured; a clear error for anything else. */
export function bindingFor(options: KuryrOptions, ip?: Ip): BindingDriver {
  const { defaultDriver, linkIface, bridge } = options.binding;
  if (defaultDriver === VLAN_BINDING) {
    if (!linkIface)
      throw new UsageError(
        "[binding] link_iface is not set: the vlan binding creates the pods' VLAN sub-interfaces on that link (the VM's trunk-parent interface, e.g. ens3); set it, or use [binding] default_driver = veth",
      );
    return new VlanBinding({ linkIface, ...(ip ? { ip } : {}) });
  }
  if (defaultDriver === VETH_BINDING) {
    if (!bridge)
      throw new UsageError(
        '[binding] bridge is empty: the veth binding needs the host bridge to attach pods to',
      );
    return new VethBinding({ bridge, ...(ip ? { ip } : {}) });
  }
  throw new UsageError(
    `[binding] default_driver = ${defaultDriver} is not supported: use ${VLAN_BINDING} (pods on trunk subports, upstream's) or ${VETH_BINDING} (a veth pair to a host bridge)`,
  );
}

export async function startKuryrDaemon(o: KuryrDaemonOptions): Promise<RunningDaemon> {
  const { options, log } = o;
  const ip = o.ip ?? new Ip();
  const binding = bindingFor(options, ip);
  const stopping = new AbortController();
  const ports = new KuryrPortWatch({
    client: o.client,
    nodeName: o.nodeName,
    log,
    registry: o.registry,
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const done = ports.start(stopping.signal);
  const handler = new KuryrCniHandler({
    ports,
    binding,
    vifTimeoutMs: options.cniDaemon.vifAnnotationTimeout * 1000,
    log,
  });
  const metrics = daemonMetrics(o.registry);
  const started: { close(): Promise<void> }[] = [];
  try {
    const server = await startDaemonServer({
      bindAddress: o.bindAddress ?? options.cniDaemon.bindAddress,
      handler,
      workers: o.workers ?? DAEMON_WORKERS,
      requestTimeoutMs: options.cniDaemon.cniTimeout * 1000,
      metrics,
      log,
    });
    started.push(server);
    const exporter = await startHealthServer({
      port: o.exporterPort ?? options.prometheusExporter.cniExporterPort,
      host: o.exporterHost ?? '',
      registry: o.registry,
      log,
      serve: { metrics: true, health: false },
    });
    started.push(exporter);
    const health = await startHealthServer({
      port: o.healthPort ?? options.cniHealthServer.port,
      host: o.exporterHost ?? '',
      registry: o.registry,
      log,
      serve: { metrics: false, health: true },
      // Upstream's probe paths, which kuryr's DaemonSets use.
      paths: { healthz: ['/alive'], readyz: ['/ready'] },
      readyz: [
        {
          name: 'kuryrports-synced',
          check: () => {
            if (!ports.hasSynced())
              throw new Error(`the KuryrPorts of node ${o.nodeName} are not listed yet`);
          },
        },
      ],
      healthz: [
        {
          name: 'ip',
          check: async (signal) => void (await ip.run(['link', 'show', 'lo'], undefined, signal)),
        },
      ],
    });
    started.push(health);
    log.info(
      {
        node: o.nodeName,
        url: server.url,
        exporter: exporter.url,
        health: health.url,
        binding: binding.name,
      },
      'kuryr-daemon serving',
    );
    return {
      url: server.url,
      exporterUrl: exporter.url,
      healthUrl: health.url,
      ports,
      binding,
      done,
      stop: async () => {
        stopping.abort(new Error('kuryr-daemon stopped'));
        await Promise.allSettled(started.map((s) => s.close()));
        await done.catch(() => undefined);
      },
    };
  } catch (err) {
    stopping.abort(new Error('kuryr-daemon failed to start'));
    await Promise.allSettled(started.map((s) => s.close()));
    await done.catch(() => undefined);
    throw err;
  }
}
