/**
 * The cloud config sync controller (upstream CCCMO's CloudConfigReconciler): the user's cloud
 * config (`openshift-config/<Infrastructure spec.cloudConfig.name>`, key `spec.cloudConfig.key`;
 * for AWS and Azure `openshift-config-managed/kube-cloud-config` first) transformed for the
 * platform's CCM into `<namespace>/cloud-conf`, key `cloud.conf`, with the source's other keys.
 *
 * A config that cannot be transformed never replaces the last good cloud-conf: the controller
 * reports CloudConfigControllerDegraded=True with what to fix (which makes the operator Degraded
 * and Upgradeable=False) and records a Warning Event on the source ConfigMap, and waits for the
 * source or the Infrastructure to change.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { kinds, type KubernetesObject, type Manager, type Request } from '../../kube/index.ts';
import {
  CLOUD_CONF_KEY,
  CLOUD_CONF_NAME,
  CLUSTER,
  Conditions,
  EventReasons,
  MANAGED_CLOUD_CONFIG_NAME,
  OPENSHIFT_CONFIG_MANAGED_NAMESPACE,
  OPENSHIFT_CONFIG_NAMESPACE,
  operatorKinds,
  type Infrastructure,
} from '../api/index.ts';
import { cloudConfigSource } from '../cloud-config/source.ts';
import { readsManagedConfig, SYNCED_PLATFORMS, transformCloudConfig } from '../cloud-config/transform.ts';
import { enabledFeatureGates } from '../render-input.ts';
import { CLOUD_CONFIG_FIELD_MANAGER, type OperatorSettings } from '../settings.ts';
import { TRANSIENT_DEGRADED_THRESHOLD_MS } from '../status/failure-window.ts';
import { syncConfigMap } from './configmap.ts';
import { SyncStatus } from './sync-status.ts';

export const CLOUD_CONFIG_CONTROLLER = 'cloud-config-sync';
const KEY: Request = { name: CLOUD_CONF_NAME };
const toKey = () => [KEY];

export function registerCloudConfigController(mgr: Manager, settings: OperatorSettings): void {
  const status = new SyncStatus(mgr, {
    available: Conditions.CloudConfigControllerAvailable,
    degraded: Conditions.CloudConfigControllerDegraded,
    label: 'Cloud Config Controller',
    what: 'cloud config',
    fieldManager: CLOUD_CONFIG_FIELD_MANAGER,
    thresholdMs: TRANSIENT_DEGRADED_THRESHOLD_MS,
  });
  const r = new CloudConfigReconciler(mgr, settings, status);
  mgr
    .controller(CLOUD_CONFIG_CONTROLLER)
    .watches(operatorKinds.Infrastructure, toKey)
    .watches(operatorKinds.FeatureGate, toKey)
    .watches(kinds.ConfigMap, toKey, { namespace: OPENSHIFT_CONFIG_NAMESPACE })
    .watches(kinds.ConfigMap, toKey, { namespace: OPENSHIFT_CONFIG_MANAGED_NAMESPACE })
    // Its own output: an edit of cloud-conf is put right.
    .watches(kinds.ConfigMap, (cm: V1ConfigMap) => (cm.metadata?.name === CLOUD_CONF_NAME ? [KEY] : []), {
      namespace: settings.managedNamespace,
    })
    .complete((_req, signal) => r.reconcile(signal));
}

class CloudConfigReconciler {
  private readonly mgr: Manager;
  private readonly settings: OperatorSettings;
  private readonly status: SyncStatus;

  constructor(mgr: Manager, settings: OperatorSettings, status: SyncStatus) {
    this.mgr = mgr;
    this.settings = settings;
    this.status = status;
  }

  async reconcile(signal: AbortSignal): Promise<void> {
    try {
      await this.sync(signal);
    } catch (err) {
      if (err instanceof SourceProblem) {
        this.mgr.events.event(
          err.about,
          'Warning',
          EventReasons.CloudConfigInvalid,
          `${err.problem}. Fix: ${err.fix}`,
        );
        this.mgr.log.warn(
          { controller: CLOUD_CONFIG_CONTROLLER },
          `cloud config not synced: ${err.problem}. Fix: ${err.fix}`,
        );
        await this.status.problem(err, signal);
        return;
      }
      await this.status.transient(err, signal);
    }
  }

  private async sync(signal: AbortSignal): Promise<void> {
    const { mgr } = this;
    const infra = await mgr.client.get(operatorKinds.Infrastructure, { name: CLUSTER }, { signal });
    const platformStatus = infra?.status?.platformStatus;
    const platform = platformStatus?.type ?? '';
    // No Infrastructure, no platform, or one without a CCM: nothing to sync.
    if (!infra || !platformStatus || !(SYNCED_PLATFORMS as readonly string[]).includes(platform)) {
      await this.status.ok(signal);
      return;
    }
    const { source, where } = await this.source(infra, platform, signal);
    const chosen = cloudConfigSource(source?.data, infra.spec?.cloudConfig?.key, where);
    if ('problem' in chosen) throw new SourceProblem(chosen.problem, chosen.fix, source ?? infra);
    const featureGate = await mgr.client.get(operatorKinds.FeatureGate, { name: CLUSTER }, { signal });
    const result = transformCloudConfig(chosen.text, {
      platformStatus,
      featureGates: enabledFeatureGates(featureGate, this.settings.releaseVersion),
      where,
    });
    if (!result.ok) throw new SourceProblem(result.problem.problem, result.problem.fix, source ?? infra);
    const write = await syncConfigMap(
      mgr,
      {
        namespace: this.settings.managedNamespace,
        name: CLOUD_CONF_NAME,
        data: { ...chosen.rest, [CLOUD_CONF_KEY]: result.text },
        binaryData: source?.binaryData,
      },
      CLOUD_CONFIG_FIELD_MANAGER,
      signal,
    );
    if (write !== 'unchanged') {
      mgr.log.info(
        { controller: CLOUD_CONFIG_CONTROLLER, from: where, platform },
        `${write} ${this.settings.managedNamespace}/${CLOUD_CONF_NAME}`,
      );
    }
    await this.status.ok(signal);
  }

  /**
   * The source ConfigMap and where it is, for messages. A missing one is an empty config, as
   * upstream takes it (the platform's defaults are then all the CCM gets).
   */
  private async source(
    infra: Infrastructure,
    platform: string,
    signal: AbortSignal,
  ): Promise<{ source: V1ConfigMap | undefined; where: string }> {
    const get = (namespace: string, name: string) =>
      this.mgr.client.get(kinds.ConfigMap, { namespace, name }, { signal, informer: { namespace } });
    if (readsManagedConfig(platform)) {
      const managed = await get(OPENSHIFT_CONFIG_MANAGED_NAMESPACE, MANAGED_CLOUD_CONFIG_NAME);
      if (managed) {
        return {
          source: managed,
          where: `${OPENSHIFT_CONFIG_MANAGED_NAMESPACE}/${MANAGED_CLOUD_CONFIG_NAME}`,
        };
      }
    }
    const name = infra.spec?.cloudConfig?.name;
    if (!name) return { source: undefined, where: 'the Infrastructure (it names no cloud config)' };
    const key = infra.spec?.cloudConfig?.key;
    const where = `ConfigMap ${OPENSHIFT_CONFIG_NAMESPACE}/${name}${key ? ` key ${key}` : ''}`;
    return { source: await get(OPENSHIFT_CONFIG_NAMESPACE, name), where };
  }
}

/** The source cannot be used as it is; `about` is where the Event goes. */
class SourceProblem extends Error {
  override readonly name = 'SourceProblem';
  readonly problem: string;
  readonly fix: string;
  readonly about: KubernetesObject;
  constructor(problem: string, fix: string, about: KubernetesObject) {
    super(`${problem}. Fix: ${fix}`);
    this.problem = problem;
    this.fix = fix;
    this.about = about;
  }
}
