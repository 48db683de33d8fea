/**
 * Files that hold credentials (a clouds.yaml, a kubeconfig, an emulator's saved state with its
 * passwords and tokens): readable by their owner only, never seen half-written.
 *
 * `writeFile(path, text, { mode: 0o600 })` is not enough: the mode applies only when the file is
 * created, so a file left world-readable at the path (an older run, one made by hand) would stay
 * so. A fresh file renamed over the path replaces it whole, mode included.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function writePrivateFile(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // A name nobody else uses, created exclusively: the mode is the one given here.
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, text, { mode: 0o600, flag: 'wx' });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
