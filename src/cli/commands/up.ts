import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

/** What `shiftstack up` will run once the parts land; printed, never pretended. */
export const UP_PLAN = [
  'start the OpenStack emulator (Keystone, Nova, Neutron, Octavia, Glance, Cinder) on loopback',
  'start the Kubernetes API emulator on loopback',
  'run ccm and capo in this process against both',
  'create a Cluster API cluster (network, router, API load balancer, bastion) and its machines',
  'register a Node per ACTIVE server and let ccm initialize it',
  'create a Service of type LoadBalancer and wait for its external IP',
  'print the kubeconfig and clouds.yaml paths and serve until Ctrl-C',
] as const;

export function registerUp(program: Command, ctx: CliContext): void {
  program
    .command('up')
    .description(
      'run the embedded demo: emulated cloud and cluster with every controller (what `npm start` runs)',
    )
    .option('--once', 'run the scenario, tear it down, check nothing leaked, and exit')
    .action(() => {
      ctx.out('shiftstack up: the embedded demo is not built yet. When it is, this command will:');
      UP_PLAN.forEach((step, i) => ctx.out(`  ${i + 1}. ${step}`));
      ctx.out('Nothing was started. Run `npx shiftstack --help` to see the commands that work today.');
    });
}
