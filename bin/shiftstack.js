#!/usr/bin/env node
// Entry point for `npx shiftstack`. The source is TypeScript run by Node's built-in type stripping,
// which needs Node >= 22.18; npm and npx put the project's pinned Node 24 first on PATH.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  // `npx --prefix <checkout> shiftstack` from another directory runs this with the system's Node:
  // hand over to the Node pinned in the checkout when there is one.
  const { existsSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    console.error(
      `shiftstack needs Node.js >= 22.18 (24 LTS recommended); this is ${process.version}.\n` +
        'Fix: run it through npm so the pinned Node 24 is used: `npm ci` once, then `npx shiftstack ...` or `npm start`.',
    );
    process.exit(1);
  }
  const { spawn } = await import('node:child_process');
  const child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // Ctrl-C reaches both processes from the terminal; a signal sent to this one alone is passed on.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  const [code, signal] = await new Promise((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
}
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv);
// main returns when the command is done: ccm and capo once their manager has stopped. Whatever
// is still running then (a runnable that ignored its stop signal, a timer) must end with us, or
// it could go on writing after our lease has passed to another replica. So exit explicitly,
// once what we printed has reached stdout and stderr.
await Promise.all(
  [process.stdout, process.stderr].map((s) => new Promise((resolve) => s.write('', resolve))),
);
process.exit(code);
