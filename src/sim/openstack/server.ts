/**
 * The emulator as a running thing: listen on loopback, write a clouds.yaml for its users, keep an
 * optional state file, stop cleanly. Used by `shiftstack sim openstack`, `shiftstack up` and tests.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { Logger } from 'pino';
import { writePrivateFile } from '../../lib/private-file.ts';
import { createOpenStackSim, type CloudOptions, type EmulatedCloud } from './index.ts';

export interface StartOptions extends CloudOptions {
  port?: number;
  host?: string;
  /** Where to write clouds.yaml (mode 0600); `.shiftstack/openstack/clouds.yaml` under the working directory by default. */
  cloudsYamlPath?: string;
  /**
   * Load the cloud from this file at start if it exists, and save to it after changes and at stop
   * (mode 0600: it holds the users' passwords and the tokens issued).
   */
  stateFile?: string;
  log?: Logger;
}

export interface RunningOpenStackSim {
  cloud: EmulatedCloud;
  url: string;
  authUrl: string;
  /** Absolute, so a command printed with it works from any directory. */
  cloudsYamlPath: string;
  /** Cloud names in clouds.yaml: `shiftstack-admin`, `shiftstack-demo`, `shiftstack-alt-demo`. */
  clouds: string[];
  stop(): Promise<void>;
}

const STATE_VERSION = 1;
/** Writes are coalesced: a burst of changes costs one state-file write. */
const SAVE_DEBOUNCE_MS = 200;

export async function startOpenStackSim(options: StartOptions = {}): Promise<RunningOpenStackSim> {
  const cloud = createOpenStackSim(options);
  if (options.stateFile) await loadState(cloud, options.stateFile, options.log);
  const url = await cloud.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  const cloudsYamlPath = resolve(options.cloudsYamlPath ?? join('.shiftstack', 'openstack', 'clouds.yaml'));
  const clouds = await writeCloudsYaml(cloud, cloudsYamlPath);

  let timer: NodeJS.Timeout | undefined;
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    if (!options.stateFile) return Promise.resolve();
    const file = options.stateFile;
    saving = saving
      .then(() => saveState(cloud, file))
      .catch((err: unknown) => options.log?.error({ err, file }, 'could not save the emulator state'));
    return saving;
  };
  if (options.stateFile) {
    cloud.onStateChange(() => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        void save();
      }, SAVE_DEBOUNCE_MS);
      timer.unref();
    });
  }

  return {
    cloud,
    url,
    authUrl: cloud.authUrl,
    cloudsYamlPath,
    clouds,
    async stop() {
      if (timer) clearTimeout(timer);
      cloud.onStateChange(undefined);
      // Transitions still pending would be lost with their timers: finish them before the last save.
      if (options.stateFile) cloud.scheduler.settleAll();
      await cloud.close();
      if (options.stateFile) await save();
    },
  };
}

async function writeCloudsYaml(cloud: EmulatedCloud, path: string): Promise<string[]> {
  const entry = (user: string, project: string) => ({
    auth: {
      auth_url: cloud.authUrl,
      username: user,
      password: cloud.options.password,
      project_name: project,
      user_domain_name: 'Default',
      project_domain_name: 'Default',
    },
    region_name: cloud.options.region,
    interface: 'public',
    identity_api_version: 3,
  });
  const clouds = {
    'shiftstack-admin': entry('admin', 'admin'),
    'shiftstack-demo': entry('demo', 'demo'),
    'shiftstack-alt-demo': entry('alt_demo', 'alt_demo'),
  };
  await writePrivateFile(
    path,
    `# Written by shiftstack sim openstack; valid while it runs at ${cloud.baseUrl}\n${stringify({ clouds })}`,
  );
  return Object.keys(clouds);
}

async function loadState(cloud: EmulatedCloud, file: string, log?: Logger): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const data = JSON.parse(text) as { version?: number; services?: Record<string, unknown> };
  if (data.version !== STATE_VERSION || !data.services) {
    throw new Error(
      `${file}: not a shiftstack emulator state file of version ${STATE_VERSION}; move it away to start from a fresh cloud`,
    );
  }
  cloud.restore(data.services);
  log?.info({ file }, 'emulator state loaded');
}

async function saveState(cloud: EmulatedCloud, file: string): Promise<void> {
  // Written whole then renamed: a crash mid-write never leaves a truncated state file.
  await writePrivateFile(
    file,
    JSON.stringify({ version: STATE_VERSION, savedAt: new Date().toISOString(), services: cloud.snapshot() }),
  );
}
