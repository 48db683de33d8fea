/**
 * KEP-2436 leader migration: moving controllers from one controller manager to another (the
 * in-tree cloud provider in kube-controller-manager → an external cloud-controller-manager)
 * without both ever running them. Besides its own (main) lease, each participating manager
 * campaigns for a second, shared lease named by `leaderName`; the configuration says which
 * component runs each migrating controller:
 *
 *   kind: LeaderMigrationConfiguration
 *   apiVersion: controllermanager.config.k8s.io/v1
 *   leaderName: cloud-provider-extraction-migration
 *   resourceLock: leases
 *   controllerLeaders:
 *     - name: service
 *       component: kube-controller-manager     # or cloud-controller-manager, or * (either)
 *
 * For the component running it, a controller is
 * - `migrated` when listed for this component (or `*`): it runs under the migration lease;
 * - `unowned` when listed for another component: it does not run here at all;
 * - `nonMigrated` when not listed: it runs under the main lease, as without migration.
 *
 * Upstream (k8s.io/controller-manager `leadermigration`) starts the migration election only after
 * the main lease is held and the non-migrated controllers started; the manager does the same.
 */
import { z } from 'zod';
import { loadConfigFile, parseConfig, parseText, UsageError } from '../../lib/config.ts';

export const LEADER_MIGRATION_API_VERSIONS = [
  'controllermanager.config.k8s.io/v1',
  'controllermanager.config.k8s.io/v1beta1',
  'controllermanager.config.k8s.io/v1alpha1',
] as const;

const controllerLeader = z.strictObject({
  name: z.string().min(1, { error: 'set the controller name, e.g. service' }),
  component: z
    .string()
    .min(1, { error: 'set the component, e.g. cloud-controller-manager, or * for either' }),
});

export const leaderMigrationSchema = z
  .strictObject({
    kind: z.literal('LeaderMigrationConfiguration', { error: 'set kind: LeaderMigrationConfiguration' }),
    apiVersion: z.enum(LEADER_MIGRATION_API_VERSIONS, {
      error: `set apiVersion to one of ${LEADER_MIGRATION_API_VERSIONS.join(', ')}`,
    }),
    leaderName: z.string().min(1, {
      error: 'set leaderName, the name of the migration lease, e.g. cloud-provider-extraction-migration',
    }),
    resourceLock: z
      .literal('leases', {
        error:
          'set resourceLock to leases: endpoints and configmaps locks were removed from client-go in 1.27',
      })
      .default('leases'),
    controllerLeaders: z.array(controllerLeader).default([]),
  })
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.controllerLeaders.forEach((l, i) => {
      if (seen.has(l.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['controllerLeaders', i, 'name'],
          message: `remove the second entry for ${l.name}: a controller runs under one migration lock only`,
        });
      }
      seen.add(l.name);
    });
  });

export type LeaderMigrationConfiguration = z.output<typeof leaderMigrationSchema>;

/** Parses and validates a configuration (YAML or JSON text); errors are `ConfigError`s naming the key. */
export function parseLeaderMigrationConfiguration(
  text: string,
  file = 'leader-migration-config',
): LeaderMigrationConfiguration {
  return parseConfig(leaderMigrationSchema, parseText(text, 'yaml', file), file);
}

/** Reads `--leader-migration-config`. */
export function loadLeaderMigrationConfiguration(
  file: string,
  signal?: AbortSignal,
): Promise<LeaderMigrationConfiguration> {
  return loadConfigFile(file, leaderMigrationSchema, signal ? { signal } : {});
}

/**
 * The cloud controllers upstream migrates, in the names both controller managers give them
 * (`--controllers`): kube-controller-manager ran them in-tree, a cloud controller manager runs them
 * now. `cloud-node` is not among them: kube-controller-manager never ran it (kubelets initialized
 * their Nodes in-tree), so a cloud controller manager runs it under its own lease.
 */
export const CLOUD_CONTROLLERS = ['route', 'service', 'cloud-node-lifecycle'] as const;

/**
 * Upstream's default configuration (k8s.io/controller-manager `leadermigration/config/default.go`),
 * used when migration is enabled without `--leader-migration-config`: the cloud controllers, each
 * run by whichever component (`*`) holds the migration lease, so one file serves both sides.
 */
export function defaultLeaderMigrationConfiguration(): LeaderMigrationConfiguration {
  return {
    kind: 'LeaderMigrationConfiguration',
    apiVersion: 'controllermanager.config.k8s.io/v1',
    leaderName: 'cloud-provider-extraction-migration',
    resourceLock: 'leases',
    controllerLeaders: CLOUD_CONTROLLERS.map((name) => ({ name, component: '*' })),
  };
}

export type MigrationFilterResult = 'migrated' | 'nonMigrated' | 'unowned';

/** Where each controller of `component` runs (upstream's `LeaderMigrator.FilterFunc`). */
export function leaderMigrationFilter(
  config: LeaderMigrationConfiguration,
  component: string,
): (controllerName: string) => MigrationFilterResult {
  const runsHere = new Map<string, boolean>();
  for (const l of config.controllerLeaders)
    runsHere.set(l.name, l.component === component || l.component === '*');
  return (name) => {
    const here = runsHere.get(name);
    if (here === undefined) return 'nonMigrated';
    return here ? 'migrated' : 'unowned';
  };
}

export interface LeaderMigrationFlags {
  /** `--enable-leader-migration`. */
  enableLeaderMigration?: boolean | undefined;
  /** `--leader-migration-config`: a file; upstream's default configuration without one. */
  leaderMigrationConfig?: string | undefined;
  /** `--leader-elect`: migration needs it. */
  leaderElect: boolean;
}

export interface LeaderMigrationSetup {
  config: LeaderMigrationConfiguration;
  /** Entries that can migrate nothing in this component: for the log, and a CLI's report. */
  warnings: string[];
}

/**
 * A controller manager's `--enable-leader-migration` and `--leader-migration-config` as upstream
 * reads them (k8s.io/controller-manager `leadermigration/options`): the file, or the default
 * configuration without one; undefined when migration is off. Migration without leader election is
 * a UsageError: upstream would then run every controller at once, which migration exists to
 * prevent. A bad file is a ConfigError naming the key. An entry for this `component` (or `*`) that
 * names none of its `controllers` would silently migrate nothing: it is a warning.
 */
export async function leaderMigrationSetup(
  flags: LeaderMigrationFlags,
  component: string,
  controllers: readonly string[],
  signal?: AbortSignal,
): Promise<LeaderMigrationSetup | undefined> {
  if (!flags.enableLeaderMigration) return undefined;
  if (!flags.leaderElect) {
    throw new UsageError(
      '--enable-leader-migration needs leader election: the migration Lease is taken after the main one. Fix: remove --leader-elect=false, or --enable-leader-migration',
    );
  }
  const file = flags.leaderMigrationConfig;
  const config = file
    ? await loadLeaderMigrationConfiguration(file, signal)
    : defaultLeaderMigrationConfiguration();
  const source = file ?? 'the default leader migration configuration';
  const warnings = config.controllerLeaders
    .filter((l) => (l.component === component || l.component === '*') && !controllers.includes(l.name))
    .map(
      (l) =>
        `${source}: controllerLeaders "${l.name}" is not a controller of ${component} (${controllers.join(', ')}), so it migrates nothing here`,
    );
  return { config, warnings };
}
