/**
 * `shiftstack sim kube`: the Kubernetes API emulator as a command. Prints the URL and the
 * kubeconfig path and serves until Ctrl-C.
 */
import type { Command } from 'commander';
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
    .action(
      async (opts: { port: number; host: string; kubeconfig: string; token?: string; tls: boolean }) => {
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
