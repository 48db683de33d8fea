/**
 * Loaded with `node --import` by tests: records the URL of every module the process loads and
 * writes them, one a line, to the file SHIFTSTACK_MODULES_FILE names when the process exits.
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded: string[] = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  const file = process.env.SHIFTSTACK_MODULES_FILE;
  if (file) writeFileSync(file, loaded.join('\n'));
});
