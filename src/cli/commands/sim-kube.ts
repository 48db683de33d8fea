/**
 * `shiftstack sim kube`: the Kubernetes API emulator as a command. Prints the URL and the
 * kubeconfig path and serves until Ctrl-C.
 */
import { InvalidArgumentError, type Command } from 'commander';
import {
  parseServiceEndpoint,
  serviceResolverOf,
  type ServiceEndpoint,
} from '../../sim/kube/conversion-webhook.ts';
import type { CliContext } from '../context.ts';
import { parsePort, untilStopped } from './sim.ts';

export function registerSimKube(sim: Command, ctx: CliContext): void {
  sim
    .command('kube')
    .description('emulate a Kubernetes API server (discovery, CRUD, watch, CRDs, apply) on loopback')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 0)
    .option('--host <address>', 'loopback address to listen on', '127.0.0.1')
    .option('--kubeconfig <file>', 'where to write the kubeconfig', '.shiftstack/kube/kubeconfig')
    .option('--token <token>', 'bearer token clients must send (random by default)')
    .option('--no-tls', 'serve plain HTTP (kubectl then sends no token and is refused)')
    .option(
      '--service-endpoint <namespace/name:port=url>',
      'where a Service a CRD conversion webhook names is reached (repeatable), e.g. capo-system/capo-webhook-service:443=https://127.0.0.1:9443',
      serviceEndpoint,
      [] as ServiceEndpoint[],
    )
    .action(
      async (opts: {
        port: number;
        host: string;
        kubeconfig: string;
        token?: string;
        tls: boolean;
        serviceEndpoint: ServiceEndpoint[];
      }) => {
        const log = ctx.log().child({ component: 'sim-kube' });
        // Loaded here, so `sim openstack` and `sim --help` do not load the Kubernetes emulator.
        const { startKubeSim } = await import('../../sim/kube/start.ts');
        const running = await startKubeSim({
          port: opts.port,
          host: opts.host,
          kubeconfigPath: opts.kubeconfig,
          tls: opts.tls,
          log,
          ...(opts.token ? { token: opts.token } : {}),
          conversion: { resolveService: serviceResolverOf(opts.serviceEndpoint) },
        });
        ctx.out(`Kubernetes API emulator listening on ${running.url}`);
        ctx.out(`kubeconfig: ${running.kubeconfigPath}`);
        ctx.out(`try:        KUBECONFIG=${running.kubeconfigPath} kubectl get namespaces`);
        ctx.out('serving until Ctrl-C');
        await untilStopped(ctx.signal);
        await running.dispose();
        log.info('emulator stopped');
      },
    );
}

function serviceEndpoint(value: string, prev: ServiceEndpoint[]): ServiceEndpoint[] {
  try {
    return [...prev, parseServiceEndpoint(value)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}
