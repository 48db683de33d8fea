import type { Command } from 'commander';
import { startOpenStackSim } from '../../sim/openstack/server.ts';
import type { CliContext } from '../context.ts';
import { untilStopped } from './sim.ts';

/** What `shiftstack up` runs today, and what it will run as the parts land; printed, never pretended. */
export const UP_PLAN: readonly { step: string; ready: boolean }[] = [
  {
    step: 'start the OpenStack emulator (Keystone, Nova, Neutron, Octavia, Glance, Cinder, Placement)',
    ready: true,
  },
  { step: 'start the Kubernetes API emulator', ready: false },
  { step: 'run ccm and capo in this process against both', ready: false },
  {
    step: 'create a Cluster API cluster (network, router, API load balancer, bastion) and its machines',
    ready: false,
  },
  { step: 'register a Node per ACTIVE server and let ccm initialize it', ready: false },
  { step: 'create a Service of type LoadBalancer and wait for its external IP', ready: false },
  { step: 'print the kubeconfig and clouds.yaml paths and serve until Ctrl-C', ready: false },
];

export function registerUp(program: Command, ctx: CliContext): void {
  program
    .command('up')
    .description('run the embedded demo on the emulators (what `npm start` runs)')
    .option('--once', 'start, check that everything answers, stop and exit')
    .option('--port <port>', 'port of the OpenStack emulator', '0')
    .action(async (opts: { once?: boolean; port: string }) => {
      ctx.out('shiftstack up — the steps of the demo, and which of them exist yet:');
      UP_PLAN.forEach((s, i) => ctx.out(`  ${i + 1}. [${s.ready ? 'runs' : 'not built yet'}] ${s.step}`));
      const running = await startOpenStackSim({ profile: 'realistic', port: Number(opts.port) });
      ctx.out('');
      ctx.out(`OpenStack emulator: ${running.url}`);
      ctx.out(`clouds.yaml:        ${running.cloudsYamlPath} (clouds: ${running.clouds.join(', ')})`);
      ctx.out(
        `try:                OS_CLIENT_CONFIG_FILE=${running.cloudsYamlPath} openstack --os-cloud shiftstack-demo network list`,
      );
      try {
        await selfCheck(running.authUrl, running.cloud.options.password);
        ctx.out('self-check:         a demo user got a token and the catalog lists every service');
        if (opts.once) return;
        ctx.out('serving until Ctrl-C');
        await untilStopped(ctx.signal);
      } finally {
        await running.stop();
      }
    });
}

/** Proves the emulator answers as a cloud would before telling the user it runs. */
async function selfCheck(authUrl: string, password: string): Promise<void> {
  const res = await fetch(`${authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'demo', domain: { id: 'default' }, password } },
        },
        scope: { project: { name: 'demo', domain: { id: 'default' } } },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 201) throw new Error(`the emulator refused a token: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { token: { catalog: { type: string }[] } };
  const types = new Set(body.token.catalog.map((s) => s.type));
  const missing = ['identity', 'compute', 'network', 'load-balancer', 'image', 'block-storage'].filter(
    (t) => !types.has(t),
  );
  if (missing.length > 0) throw new Error(`the emulator's catalog lacks ${missing.join(', ')}`);
}
