/**
 * The trusted CA bundle controller (upstream CCCMO's TrustedCABundleReconciler): the CCM's trust
 * bundle `<namespace>/ccm-trusted-ca` (key `ca-bundle.crt`) from the Proxy's trustedCA ConfigMap,
 * the synced cloud config's `ca-bundle.pem` and the system bundle. A source that is not valid PEM
 * is left out with a Warning Event on it and the bundle is built from the rest; only an unusable
 * system bundle stops the controller (TrustedCABundleControllerControllerDegraded).
 *
 * Unlike upstream, the bundle is written without a Proxy object too (plain Kubernetes has none):
 * the CCM's pod mounts it and would not start without it.
 */
import { readFile } from 'node:fs/promises';
import { rootCertificates } from 'node:tls';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { kinds, type KubernetesObject, type Manager, type Request } from '../../kube/index.ts';
import {
  CLOUD_CONF_NAME,
  CLOUD_CONFIG_CA_KEY,
  CLUSTER,
  Conditions,
  EventReasons,
  OPENSHIFT_CONFIG_NAMESPACE,
  PROXY_CA_KEY,
  TRUSTED_CA_KEY,
  TRUSTED_CA_NAME,
  operatorKinds,
} from '../api/index.ts';
import { TRUSTED_CA_FIELD_MANAGER, type OperatorSettings } from '../settings.ts';
import { TRANSIENT_DEGRADED_THRESHOLD_MS } from '../status/failure-window.ts';
import { mergeTrustBundle, type TrustSource } from '../trusted-ca/bundle.ts';
import { syncConfigMap } from './configmap.ts';
import { SyncStatus } from './sync-status.ts';

export const TRUSTED_CA_CONTROLLER = 'trusted-ca-bundle-sync';
const KEY: Request = { name: TRUSTED_CA_NAME };
const toKey = () => [KEY];

export function registerTrustedCAController(mgr: Manager, settings: OperatorSettings): void {
  const status = new SyncStatus(mgr, {
    available: Conditions.TrustedCABundleControllerAvailable,
    degraded: Conditions.TrustedCABundleControllerDegraded,
    label: 'Trusted CA Bundle Controller',
    what: 'the trust bundle',
    fieldManager: TRUSTED_CA_FIELD_MANAGER,
    thresholdMs: TRANSIENT_DEGRADED_THRESHOLD_MS,
  });
  const r = new TrustedCAReconciler(mgr, settings, status);
  const ours = new Set([CLOUD_CONF_NAME, TRUSTED_CA_NAME]);
  mgr
    .controller(TRUSTED_CA_CONTROLLER)
    .watches(operatorKinds.Proxy, toKey)
    .watches(kinds.ConfigMap, toKey, { namespace: OPENSHIFT_CONFIG_NAMESPACE })
    .watches(kinds.ConfigMap, (cm: V1ConfigMap) => (ours.has(cm.metadata?.name ?? '') ? [KEY] : []), {
      namespace: settings.managedNamespace,
    })
    .complete((_req, signal) => r.reconcile(signal));
}

class TrustedCAReconciler {
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
      await this.status.transient(err, signal);
    }
  }

  private async sync(signal: AbortSignal): Promise<void> {
    const { mgr, settings } = this;
    const path = settings.systemTrustBundle;
    // A file the pod's image provides: unreadable is a failure to retry, not the user's to fix.
    const systemPem = await readSystemBundle(path, signal);
    const warnings: { about: KubernetesObject; message: string }[] = [];
    const proxy = await mgr.client.get(operatorKinds.Proxy, { name: CLUSTER }, { signal });
    let proxySource: TrustSource | undefined;
    let proxyCM: V1ConfigMap | undefined;
    const caName = proxy?.spec?.trustedCA?.name;
    if (proxy && caName) {
      proxyCM = await this.configMap(OPENSHIFT_CONFIG_NAMESPACE, caName, signal);
      const what = `ConfigMap ${OPENSHIFT_CONFIG_NAMESPACE}/${caName} key ${PROXY_CA_KEY}`;
      const pem = proxyCM?.data?.[PROXY_CA_KEY];
      if (pem === undefined) {
        warnings.push({
          about: proxyCM ?? proxy,
          message: `${what}, which Proxy cluster names as its trustedCA, does not exist: the trust bundle is built without it. Fix: create it, or correct spec.trustedCA of Proxy cluster`,
        });
      } else {
        proxySource = { what, pem };
      }
    }
    const cloudConf = await this.configMap(settings.managedNamespace, CLOUD_CONF_NAME, signal);
    const cloudPem = cloudConf?.data?.[CLOUD_CONFIG_CA_KEY];
    const merged = mergeTrustBundle({
      system: { what: path, pem: systemPem },
      proxy: proxySource,
      cloudConfig:
        cloudPem !== undefined && cloudConf
          ? {
              what: `ConfigMap ${settings.managedNamespace}/${CLOUD_CONF_NAME} key ${CLOUD_CONFIG_CA_KEY}`,
              pem: cloudPem,
            }
          : undefined,
    });
    if (!merged.ok) {
      await this.status.problem(
        {
          problem: merged.problem,
          fix: `give the operator a PEM bundle of CA certificates at ${path} (--system-ca-bundle)`,
        },
        signal,
      );
      return;
    }
    for (const w of merged.warnings) {
      // Each source exists when it is left out for its content.
      const about = (w.source === 'proxy' ? proxyCM : cloudConf)!;
      warnings.push({ about, message: `${w.message}. Fix: put PEM CA certificates there` });
    }
    for (const w of warnings) {
      mgr.events.event(w.about, 'Warning', EventReasons.TrustedCAInvalid, w.message);
      mgr.log.warn({ controller: TRUSTED_CA_CONTROLLER }, w.message);
    }
    const write = await syncConfigMap(
      mgr,
      {
        namespace: settings.managedNamespace,
        name: TRUSTED_CA_NAME,
        data: { [TRUSTED_CA_KEY]: merged.bundle },
      },
      TRUSTED_CA_FIELD_MANAGER,
      signal,
    );
    if (write !== 'unchanged') {
      mgr.log.info(
        { controller: TRUSTED_CA_CONTROLLER },
        `${write} ${settings.managedNamespace}/${TRUSTED_CA_NAME}`,
      );
    }
    await this.status.ok(signal);
  }

  private configMap(namespace: string, name: string, signal: AbortSignal) {
    return this.mgr.client.get(kinds.ConfigMap, { namespace, name }, { signal, informer: { namespace } });
  }
}

/** `--system-ca-bundle=node`: the CA certificates Node.js itself trusts (images without a system bundle). */
export const NODE_ROOT_CERTIFICATES = 'node';

/** The system bundle: a file, or Node's own roots. */
export function readSystemBundle(path: string, signal?: AbortSignal): Promise<string> {
  if (path === NODE_ROOT_CERTIFICATES) return Promise.resolve(`${rootCertificates.join('\n')}\n`);
  return readFile(path, { encoding: 'utf8', signal });
}
