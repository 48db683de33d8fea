/**
 * `shiftstack up` on the emulators: start the world and the controllers, run the scenario with the
 * progress view, then either serve until Ctrl-C (the user looks around with kubectl and the
 * openstack CLI) or, with `once`, tear down, check for leaks and say whether everything held.
 */
import type { Logger } from '../lib/log.ts';
import { startControllers, type Controllers } from './controllers.ts';
import { observer } from './observe.ts';
import { callsText, Progress, seconds } from './progress.ts';
import { kuryrDemoBuilt } from './kuryr.ts';
import { tokenHint, type MetricsEndpoint } from './metrics.ts';
import { runScenario, SERVICE } from './scenario.ts';
import { ADMIN_CLOUD, DEMO_CLOUD, startWorld, type World } from './world.ts';

/** The cluster name the ccm gives load balancers, as the manifest's Cluster is named. */
const CLUSTER_NAME = 'capo-demo';

export interface DemoOptions {
  once: boolean;
  timeScale: number;
  port: number;
  /** Where the emulators' files go. */
  dir: string;
  /** Lines of output (without newline), for plain output. */
  out: (line: string) => void;
  /** Raw writes to a terminal; the live view is drawn when set. */
  tty?: { write: (text: string) => void; columns: number } | undefined;
  log: Logger;
  signal: AbortSignal;
  /** Resolves when the user asks to stop (Ctrl-C). */
  untilStopped: () => Promise<void>;
}

/** Runs the demo; resolves with the exit code (0: everything held). */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const started = performance.now();
  const write = opts.tty ? opts.tty.write : (text: string) => opts.out(text.replace(/\n$/, ''));
  const progress = new Progress({
    write,
    tty: Boolean(opts.tty),
    ...(opts.tty ? { columns: opts.tty.columns } : {}),
  });
  const say = (line: string) => progress.log(line);

  say(
    `shiftstack up: the OpenStack emulator (realistic profile, time scale ${opts.timeScale}) and the ` +
      'Kubernetes emulator; capo, mapo, the in-tree provider, ccm-operator and the machines’ kubelets in this process',
  );
  const world = await startWorld({
    timeScale: opts.timeScale,
    port: opts.port,
    dir: opts.dir,
    log: opts.log.child({ component: 'sim' }),
    signal: opts.signal,
  });
  let controllers: Controllers | undefined;
  try {
    controllers = await startControllers(world, {
      log: opts.log,
      clusterName: CLUSTER_NAME,
      cloudLoops: 'in-tree',
      // Once this build holds Kuryr's controllers, the cluster's pods are on Kuryr.
      kuryr: kuryrDemoBuilt(),
    });
    for (const line of whereToLook(world, controllers)) say(line);
    for (const line of metricsLines(await controllers.metrics(opts.signal), world)) say(line);
    const view = observer(world, controllers.demo, { machineAPI: controllers.mapo !== undefined });
    progress.start(() => view.state());
    const result = await runScenario({
      world,
      controllers,
      progress,
      once: opts.once,
      signal: opts.signal,
      log: opts.log,
    });
    progress.stop();
    say(
      `API calls: ${callsText({ kinds: [], waiting: [], openstack: result.openstackCalls ?? view.openstackCalls(), kube: world.kubeRequests() })}`,
    );
    for (const f of result.failures) say(`failed: ${f}`);
    // Again, with what started since: the kuryr controller, the ccm the operator deployed.
    for (const line of metricsLines(await controllers.metrics(opts.signal), world)) say(line);
    const took = seconds(performance.now() - started);
    if (result.interrupted !== undefined) {
      say(interruptedText(result.interrupted, opts.once, took));
      return 1;
    }
    if (opts.once) {
      say(
        result.ok
          ? `shiftstack up --once: every step held (${took})`
          : `shiftstack up --once: FAILED (${took})`,
      );
      return result.ok ? 0 : 1;
    }
    // The paths scrolled away while the scenario ran: say again where to look.
    for (const line of whereToLook(world, controllers).slice(3)) say(line);
    say(result.ok ? `the demo is up (${took}); serving until Ctrl-C` : 'serving what runs until Ctrl-C');
    await Promise.race([opts.untilStopped(), controllers.failed]);
    say(`stopping the controllers and both emulators; ${GONE}`);
    return result.ok ? 0 : 1;
  } finally {
    progress.stop();
    await controllers?.stop();
    await world.close();
  }
}

const GONE = 'the emulated cloud and cluster live in this process and end with it';

/** What happens after Ctrl-C in the middle of the scenario: nothing more runs, not even the teardown. */
function interruptedText(step: string, once: boolean, took: string): string {
  const skipped = once ? ' without the teardown and the leak check' : '';
  return `interrupted during "${step}" (${took}): stopping the controllers and both emulators${skipped}; ${GONE}`;
}

/** `name → URL` of each /metrics, as `curl` reaches it; how to pass a token where one is asked for. */
function metricsLines(endpoints: readonly MetricsEndpoint[], world: World): string[] {
  const lines = endpoints.map(
    (e, i) => `  ${i === 0 ? 'metrics:    ' : '            '} ${e.name} → ${e.url}`,
  );
  if (endpoints.some((e) => e.token)) {
    lines.push(
      `               (the ccm's secure port asks for a token, as upstream's: ${tokenHint(world.kube.kubeconfigPath)})`,
    );
  }
  return lines;
}

/** Absolute paths: a command copied from here works from any directory. */
function whereToLook(world: World, controllers: Controllers): string[] {
  const kubeconfig = world.kube.kubeconfigPath;
  const clouds = world.sim.cloudsYamlPath;
  const m = controllers.migration;
  const running = [
    ...(controllers.ccm ? [`ccm (${controllers.ccm.controllers.run.join(', ')})`] : []),
    ...(m
      ? [
          `the in-tree provider's stand-in (kube-controller-manager: ${m.kcm.controllers.join(', ')})`,
          'ccm-operator (its ccm runs as a Deployment, a child process of this one)',
        ]
      : []),
    controllers.capo
      ? 'capo (openstackcluster, openstackmachine, openstackserver)'
      : 'no capo (not built yet)',
    ...(controllers.mapo ? [`mapo (${controllers.mapo.controllers.join(', ')})`] : []),
    'kubelets',
  ];
  return [
    `  OpenStack:   ${world.sim.url}  clouds.yaml ${clouds} (clouds ${ADMIN_CLOUD}, ${DEMO_CLOUD})`,
    `  Kubernetes:  ${world.kube.url}  kubeconfig ${kubeconfig}`,
    `  controllers: ${running.join(', ')}`,
    `  look:        kubectl --kubeconfig ${kubeconfig} get clusters,machines,openstackmachines,nodes,services -A`,
    `               OS_CLIENT_CONFIG_FILE=${clouds} openstack --os-cloud ${DEMO_CLOUD} server list`,
    `               kubectl --kubeconfig ${kubeconfig} get service ${SERVICE.name} -o wide`,
    ...(m
      ? [
          `               kubectl --kubeconfig ${kubeconfig} get clusteroperator cloud-controller-manager -o yaml`,
          `               kubectl --kubeconfig ${kubeconfig} -n openshift-cloud-controller-manager get deployments,configmaps`,
        ]
      : []),
    ...(controllers.mapo
      ? [
          `               kubectl --kubeconfig ${kubeconfig} get machinesets.machine.openshift.io,machines.machine.openshift.io -A -o wide`,
        ]
      : []),
  ];
}
