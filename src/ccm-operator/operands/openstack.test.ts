/**
 * The shiftstack flavour's container runs `shiftstack ccm`: its command line, after the kubelet's
 * `$(VAR)` expansion, is read by the real command's option table (src/cli/commands/ccm.ts) with
 * nothing unknown, hidden (accepted only to be ignored) or refused; and the wrapper runs the
 * image's entrypoint with those arguments.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { buildProgram } from '../../cli/main.ts';
import { Inputs } from '../../cli/inputs.ts';
import { durationFlag } from '../../cli/upstream-flags.ts';
import { renderOperands } from './index.ts';
import { ccmOf, expandKubeletVars, find, podOf, renderInput } from './testing/input.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

async function ccmCommand() {
  const program = await buildProgram(
    {
      out: () => {},
      err: () => {},
      log: () => {
        throw new Error('unused');
      },
      signal: new AbortController().signal,
    },
    ['node', 'shiftstack', 'ccm'],
  );
  return program.commands.find((c) => c.name() === 'ccm')!;
}

function deployment(over = {}) {
  const { objects } = renderOperands(renderInput('OpenStack', over));
  return find<V1Deployment>(objects, 'Deployment', 'openstack-cloud-controller-manager');
}

describe('the OpenStack operand, shiftstack flavour, runs shiftstack ccm', () => {
  it('its arguments are `ccm` and flags shiftstack ccm implements, with values it accepts', async () => {
    const c = ccmOf(deployment({ namespace: 'ccm-test' }));
    const args = (c.args ?? []).map((a) => expandKubeletVars(c, a));
    assert.equal(args[0], 'ccm');
    const ccm = await ccmCommand();
    const { operands, unknown } = ccm.parseOptions(args.slice(1));
    assert.deepEqual(operands, []);
    assert.deepEqual(unknown, []);
    for (const arg of args.slice(1)) {
      const name = arg.split('=')[0]!;
      const option = ccm.options.find((o) => o.long === name);
      assert.ok(option, `${name} is a flag of shiftstack ccm`);
      // Hidden flags are OCCM's that shiftstack accepts and ignores with a warning.
      assert.ok(!option.hidden, `${name} is implemented, not only accepted`);
      assert.ok(!Inputs.isBad(ccm.getOptionValue(option.attributeName())), `${arg} is a value it takes`);
    }
    const flags = ccm.opts<Record<string, unknown>>();
    assert.equal(flags.cloudConfig, '/etc/openstack/config/cloud.conf');
    assert.equal(flags.clusterName, 'mycluster-x7k2p', '--cluster-name is the infrastructure name');
    assert.equal(flags.leaderElect, true);
    assert.equal(flags.leaderElectResourceNamespace, 'ccm-test');
    assert.equal(flags.configureCloudRoutes, false);
    for (const [flag, ms] of [
      ['leaderElectLeaseDuration', 137_000],
      ['leaderElectRenewDeadline', 107_000],
      ['leaderElectRetryPeriod', 26_000],
    ] as const) {
      assert.equal(durationFlag(flag, flags[flag] as string), ms);
    }
  });

  it('the probes reach the secure port where the flags put it, on paths served without a token', async () => {
    const c = ccmOf(deployment());
    const ccm = await ccmCommand();
    ccm.parseOptions((c.args ?? []).slice(1));
    const flags = ccm.opts<{
      securePort: number;
      bindAddress: string;
      authorizationAlwaysAllowPaths: string[];
    }>();
    assert.ok(flags.securePort > 0);
    for (const probe of [c.livenessProbe, c.readinessProbe]) {
      assert.equal(probe?.httpGet?.scheme, 'HTTPS');
      assert.equal(probe?.httpGet?.port, flags.securePort);
      assert.equal(probe?.httpGet?.host, flags.bindAddress);
      assert.ok(flags.authorizationAlwaysAllowPaths.includes(probe.httpGet.path!), probe.httpGet.path);
    }
    assert.ok(c.ports?.some((p) => p.containerPort === flags.securePort));
  });

  it('the command reads apiserver-url.env then runs the image entrypoint with the arguments', async () => {
    const c = ccmOf(deployment());
    const [sh, dashC, script, arg0] = c.command ?? [];
    assert.deepEqual([sh, dashC, arg0], ['/bin/sh', '-c', 'shiftstack']);
    assert.match(script!, /\. \/etc\/kubernetes\/apiserver-url\.env/);
    const entry = /exec (\S+) "\$@"$/.exec(script!)?.[1];
    // The Dockerfile installs image/bin/entrypoint there.
    const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    assert.ok(entry && dockerfile.includes(`image/bin/entrypoint`) && entry === '/usr/local/bin/entrypoint');
    assert.match(dockerfile, /COPY [^\n]*image\/bin\/entrypoint[^\n]* \/usr\/local\/bin\//);
    // Host /etc/kubernetes, where the file is, is mounted.
    assert.ok(c.volumeMounts?.some((m) => m.mountPath === '/etc/kubernetes'));
  });

  it('trusts ccm-trusted-ca: Node.js is pointed at the mounted bundle', () => {
    const d = deployment();
    const c = ccmOf(d);
    const trust = podOf(d).volumes!.find((v) => v.configMap?.name === 'ccm-trusted-ca')!;
    const mount = c.volumeMounts!.find((m) => m.name === trust.name)!;
    const file = trust.configMap!.items![0]!.path;
    assert.equal(c.env?.find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value, `${mount.mountPath}/${file}`);
  });
});
