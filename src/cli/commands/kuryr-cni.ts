/**
 * `shiftstack kuryr cni`: the CNI plugin (src/kuryr/cni/plugin.ts) as kubelet's runtime runs it —
 * `CNI_*` variables, the network configuration on stdin, the result or the spec's error JSON on
 * stdout and a non-zero exit on failure. `image/bin/kuryr-cni` is this command as a file for the
 * CNI bin directory. VERSION needs nothing; everything else goes to the node's kuryr-daemon.
 */
import type { Command } from 'commander';
import { runCniPlugin } from '../../kuryr/cni/plugin.ts';
import { ExitCodeError, type CliContext } from '../context.ts';

/** Bound on reading the configuration: a runtime writes it at once and closes stdin. */
const STDIN_TIMEOUT_MS = 30_000;

export function configureKuryrCni(command: Command, ctx: CliContext): void {
  command
    .description(
      'the kuryr CNI plugin (CNI 1.0: ADD, DEL, CHECK, VERSION), run by the container runtime with CNI_* variables and the network configuration on stdin; forwards to kuryr-daemon',
    )
    .action(async () => {
      const stdin = process.env.CNI_COMMAND === 'VERSION' ? '' : await readStdin(ctx.signal);
      const outcome = await runCniPlugin({ env: process.env, stdin, signal: ctx.signal });
      if (outcome.stdout !== '') ctx.out(outcome.stdout.replace(/\n$/, ''));
      if (outcome.log) ctx.err(outcome.log);
      if (outcome.exitCode !== 0)
        throw new ExitCodeError(outcome.exitCode, outcome.log ?? 'CNI command failed');
    });
}

async function readStdin(signal: AbortSignal): Promise<string> {
  // Run by hand from a terminal there is no configuration to wait for.
  if (process.stdin.isTTY) return '';
  const bound = AbortSignal.any([signal, AbortSignal.timeout(STDIN_TIMEOUT_MS)]);
  const chunks: Buffer[] = [];
  const onAbort = () => process.stdin.destroy();
  bound.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  } finally {
    bound.removeEventListener('abort', onAbort);
  }
  return Buffer.concat(chunks).toString('utf8');
}
