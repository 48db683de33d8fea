/**
 * `shiftstack kuryr`: Kuryr-Kubernetes' commands, each defined in its own module and loaded only when
 * it runs or shows its help (a node's `kuryr daemon` never loads the controller's code, nor the
 * controller the CNI bindings): `controller` (kuryr-k8s-controller, kuryr-controller.ts), `daemon`
 * (kuryr-daemon) and `cni` (the CNI plugin, kuryr-cni.ts), `gc` (orphaned OpenStack objects,
 * kuryr-gc.ts).
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

type Configure = (command: Command, ctx: CliContext) => void;

interface Subcommand {
  name: string;
  description: string;
  load: () => Promise<Configure>;
}

export const KURYR_SUBCOMMANDS: readonly Subcommand[] = [
  {
    name: 'controller',
    description:
      "Kuryr's controller (kuryr-k8s-controller): pods as trunk subports, namespace networks, Services on Octavia, NetworkPolicies as security groups, from kuryr.conf",
    load: async () => (await import('./kuryr-controller.ts')).configureKuryrController,
  },
  {
    name: 'daemon',
    description:
      "Kuryr's CNI daemon (kuryr-daemon), one per node: serves the CNI plugin's requests, binding each pod's VIF into its network namespace",
    load: async () => (await import('./kuryr-daemon.ts')).configureKuryrDaemon,
  },
  {
    name: 'cni',
    description:
      "Kuryr's CNI plugin (kuryr-cni), run by the kubelet's container runtime: CNI 1.0 ADD, DEL, CHECK, VERSION, handed to the daemon",
    load: async () => (await import('./kuryr-cni.ts')).configureKuryrCni,
  },
  {
    name: 'gc',
    description:
      'lists (and with --delete removes) the OpenStack ports, networks and load balancers Kuryr made that nothing in the cluster owns any more',
    load: async () => (await import('./kuryr-gc.ts')).configureKuryrGc,
  },
];

/**
 * `shiftstack kuryr`'s subcommands, on the command main.ts made. Each is named here with its
 * description, and configured (its module loaded) only once commander dispatches to it.
 */
export function configureKuryr(command: Command, ctx: CliContext): void {
  const loaded = new Set<string>();
  const subs = new Map<string, Command>();
  for (const s of KURYR_SUBCOMMANDS) subs.set(s.name, command.command(s.name).description(s.description));
  const configure = async (name: string) => {
    const sub = subs.get(name);
    const def = KURYR_SUBCOMMANDS.find((s) => s.name === name);
    if (!sub || !def || loaded.has(name)) return;
    loaded.add(name);
    (await def.load())(sub, ctx);
  };
  // Commander's own `kuryr help <sub>` dispatches through this hook too.
  command.hook('preSubcommand', async (_parent, sub) => configure(sub.name()));
}
