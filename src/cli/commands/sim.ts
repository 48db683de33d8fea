import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CliContext } from '../context.ts';
import { registerSimKcm } from './sim-kcm.ts';
import { registerSimKube } from './sim-kube.ts';

export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('expected a port from 0 to 65535 (0 picks a free one)');
  return n;
}

export function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number greater than 0');
  return n;
}

/** Resolves when the CLI's stop signal fires (Ctrl-C, SIGTERM). */
export function untilStopped(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** `shiftstack sim`'s flags and action, on the command main.ts made (name and description). */
export function configureSim(command: Command, ctx: CliContext): void {
  const sim = command;

  sim
    .command('openstack')
    .description(
      'emulate Keystone, Nova, Neutron, Octavia, Glance, Cinder and Placement on one loopback port',
    )
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 0)
    .option('--host <address>', 'loopback address to listen on', '127.0.0.1')
    .addOption(
      new Option('--profile <profile>', 'delays: fast for tests, realistic for demos and benchmarks')
        .choices(['fast', 'realistic'])
        .default('fast'),
    )
    .option(
      '--time-scale <factor>',
      'multiply every delay of the profile (0.1 = ten times faster)',
      parsePositive,
    )
    .option('--state <file>', 'load the cloud from this file and save it there on changes and at exit')
    .option(
      '--clouds-yaml <file>',
      'where to write the clouds.yaml for the emulated users',
      '.shiftstack/openstack/clouds.yaml',
    )
    .option('--password <password>', 'password of the seeded users admin, demo and alt_demo', 'secret')
    .action(
      async (opts: {
        port: number;
        host: string;
        profile: 'fast' | 'realistic';
        timeScale?: number;
        state?: string;
        cloudsYaml: string;
        password: string;
      }) => {
        const log = ctx.log().child({ component: 'sim-openstack' });
        // Loaded here, so `sim kube` and `sim --help` do not load the OpenStack emulator.
        const { startOpenStackSim } = await import('../../sim/openstack/server.ts');
        const running = await startOpenStackSim({
          port: opts.port,
          host: opts.host,
          profile: opts.profile,
          ...(opts.timeScale !== undefined ? { overrides: { timeScale: opts.timeScale } } : {}),
          ...(opts.state ? { stateFile: opts.state } : {}),
          cloudsYamlPath: opts.cloudsYaml,
          password: opts.password,
          log,
        });
        ctx.out(`OpenStack emulator listening on ${running.url} (profile ${opts.profile})`);
        ctx.out(`auth URL:    ${running.authUrl}`);
        ctx.out(`clouds.yaml: ${running.cloudsYamlPath} (clouds: ${running.clouds.join(', ')})`);
        ctx.out(`admin API:   ${running.url}/_sim/stats, /_sim/faults, /_sim/profile`);
        ctx.out(
          `try:         OS_CLIENT_CONFIG_FILE=${running.cloudsYamlPath} openstack --os-cloud shiftstack-demo server list`,
        );
        ctx.out('serving until Ctrl-C');
        await untilStopped(ctx.signal);
        await running.stop();
        log.info('emulator stopped');
      },
    );

  registerSimKube(sim, ctx);
  registerSimKcm(sim, ctx);
}
