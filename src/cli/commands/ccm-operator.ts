/**
 * `shiftstack ccm-operator`: the operator that deploys every platform's cloud controller manager
 * (upstream's cluster-cloud-controller-manager-operator). Each subcommand configures itself in its
 * own function: `render` here, `run` in ccm-operator-run.ts.
 */
import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import { CCM_OPERATOR_DEFAULTS } from '../../ccm-operator/cmd.ts';
import { readImagesFile, unknownImageKeysWarnings } from '../../ccm-operator/images.ts';
import {
  readFeatureGateFile,
  readInfrastructureFile,
  readProxyFile,
} from '../../ccm-operator/input-files.ts';
import {
  DEFAULT_IMAGES,
  DEFAULT_OPERAND_NAMESPACE,
  OPERAND_PLATFORMS,
  OperandRenderError,
  renderOperands,
  type OpenStackCcm,
} from '../../ccm-operator/operands/index.ts';
import type { Infrastructure } from '../../ccm-operator/api/index.ts';
import {
  DEFAULT_INFRASTRUCTURE_NAME,
  isOperandPlatform,
  NO_OPERAND_PLATFORMS,
  renderInput,
} from '../../ccm-operator/render-input.ts';
import { closest, UsageError } from '../../lib/config.ts';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import { configureRun } from './ccm-operator-run.ts';

/** `shiftstack ccm-operator`'s subcommands, on the command main.ts made (name and description). */
export function configureCcmOperator(command: Command, ctx: CliContext): void {
  configureRun(command, ctx);
  configureRender(command, ctx);
}

interface RenderFlags {
  platform?: string;
  infrastructure?: string;
  images?: string;
  proxy?: string;
  featureGate?: string;
  releaseVersion: string;
  openstackCcm: OpenStackCcm;
  namespace: string;
}

const VALID_TYPES = [...OPERAND_PLATFORMS, ...NO_OPERAND_PLATFORMS].join(', ');

/**
 * `shiftstack ccm-operator render`: the manifests the operator applies for one platform, as a
 * multi-document YAML stream on stdout (for `kubectl apply -f -` on a cluster without the
 * operator, or for review). Problems with the inputs exit 2, all reported together.
 */
export function configureRender(parent: Command, ctx: CliContext): void {
  const cmd = parent
    .command('render')
    .description(
      "print the manifests the operator applies for a platform's cloud controller manager, as a multi-document YAML stream",
    )
    .option(
      '--platform <type>',
      `the platform, as Infrastructure's status.platformStatus.type names it: ${VALID_TYPES} (these two have no CCM: nothing is printed); default: the --infrastructure file's`,
    )
    .option(
      '--infrastructure <file>',
      'an Infrastructure (config.openshift.io/v1, YAML or JSON): its status gives the platform, the infrastructure name (--cluster-name) and the topology (SingleReplica: one replica)',
    )
    .option(
      '--images <file>',
      "upstream's images.json, or the cloud-controller-manager-images ConfigMap holding it: the keys it has replace the defaults below",
    )
    .option(
      '--proxy <file>',
      "a Proxy (config.openshift.io/v1): its status's proxies reach every CCM container",
    )
    .option(
      '--feature-gate <file>',
      "a FeatureGate (config.openshift.io/v1): the gates its status enables at --release-version reach the CCMs' --feature-gates",
    )
    .option(
      '--release-version <version>',
      "the release whose FeatureGate status entry applies, as the operator's RELEASE_VERSION (the only entry is taken when there is one)",
      process.env.RELEASE_VERSION || CCM_OPERATOR_DEFAULTS.releaseVersion,
    )
    .addOption(
      new Option(
        '--openstack-ccm <which>',
        "OpenStack's CCM: shiftstack ccm (image key shiftstack), or upstream OCCM as upstream's operator runs it (cloudControllerManagerOpenStack)",
      )
        .choices(['shiftstack', 'upstream'])
        .default('shiftstack'),
    )
    .option('--namespace <namespace>', "the operands' namespace", DEFAULT_OPERAND_NAMESPACE)
    .addHelpText(
      'after',
      [
        '',
        `Without --infrastructure: infrastructure name "${DEFAULT_INFRASTRUCTURE_NAME}" (OCCM's default cluster name, so its`,
        'load balancers keep their names), a highly available control plane (two replicas and a',
        'PodDisruptionBudget), no proxy. Without --feature-gate: no feature gates.',
        '',
        'Images without --images:',
        ...Object.entries(DEFAULT_IMAGES).map(([k, v]) => `  ${k}: ${v}`),
        '',
        'The CCMs read what the operator writes (cloud-conf, ccm-trusted-ca) and their credentials',
        'Secret; on a cluster without the operator, create those in the namespace. A dry run on a new',
        'cluster needs the namespace to exist first, as on any API server:',
        '  shiftstack ccm-operator render --platform OpenStack | kubectl apply --dry-run=server -f -',
      ].join('\n'),
    );
  acceptEveryFlag(cmd).action(async (flags: RenderFlags, c: Command) => {
    const inputs = new Inputs('shiftstack ccm-operator render', c);
    const read = { signal: ctx.signal };
    const infrastructure = flags.infrastructure
      ? await inputs.checkAsync(() => readInfrastructureFile(flags.infrastructure!, read))
      : undefined;
    const type = inputs.check(() => platformType(flags, infrastructure));
    const images = flags.images
      ? await inputs.checkAsync(() => readImagesFile(flags.images!, { flag: '--images', signal: ctx.signal }))
      : undefined;
    const proxy = flags.proxy ? await inputs.checkAsync(() => readProxyFile(flags.proxy!, read)) : undefined;
    const featureGate = flags.featureGate
      ? await inputs.checkAsync(() => readFeatureGateFile(flags.featureGate!, read))
      : undefined;
    inputs.done();
    for (const w of images ? unknownImageKeysWarnings(images, `--images ${flags.images}`) : [])
      ctx.err(`warning: ${w}`);
    if (!isOperandPlatform(type)) {
      ctx.err(
        `shiftstack: platform ${type}: no cloud controller manager to deploy (upstream's operator deploys nothing)`,
      );
      return;
    }
    let objects;
    try {
      objects = renderOperands(
        renderInput({
          platform: type,
          infrastructure,
          proxy,
          featureGate,
          images: images?.images ?? DEFAULT_IMAGES,
          openstackCcm: flags.openstackCcm,
          namespace: flags.namespace,
          releaseVersion: flags.releaseVersion,
        }),
      ).objects;
    } catch (err) {
      if (err instanceof OperandRenderError) throw new UsageError(err.message);
      throw err;
    }
    ctx.out(
      objects
        .map((o) => stringify(o, { lineWidth: 0 }))
        .join('---\n')
        .replace(/\n$/, ''),
    );
  });
}

/** The platform type `render` works for: --platform, else the Infrastructure's; one known to Infrastructure. */
function platformType(flags: RenderFlags, infrastructure: Infrastructure | undefined): string | undefined {
  const fromFile = infrastructure?.status?.platformStatus?.type;
  const type = flags.platform ?? fromFile;
  if (type === undefined) {
    if (flags.infrastructure) return undefined; // its own problem is reported
    throw new UsageError(
      `--platform: missing. Fix: name the platform (${VALID_TYPES}), or give --infrastructure with its status.platformStatus.type`,
    );
  }
  const known = [...OPERAND_PLATFORMS, ...NO_OPERAND_PLATFORMS] as readonly string[];
  if (!known.includes(type)) {
    const near = closest(type, known);
    throw new UsageError(
      `${flags.platform !== undefined ? '--platform' : `${flags.infrastructure}: status.platformStatus.type`}: "${type}" is not a platform with a cloud controller manager. Fix: ${near ? `write ${near}, or ` : ''}use one of ${VALID_TYPES}`,
    );
  }
  if (flags.platform !== undefined && fromFile !== undefined && fromFile !== flags.platform) {
    throw new UsageError(
      `--platform ${flags.platform} contradicts ${flags.infrastructure}, whose status.platformStatus.type is ${fromFile}. Fix: leave --platform out, or give the Infrastructure of that platform`,
    );
  }
  return type;
}
