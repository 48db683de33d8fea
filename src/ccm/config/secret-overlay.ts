/**
 * A cloud.conf kept in a Kubernetes Secret, laid over the file, as the in-tree provider did with
 * `gcfg.ReadStringInto(cfg, secretText)` into the config already read from the file: a single-valued
 * key set in the Secret wins, a repeatable key (`public-network-name`) gets the Secret's values added
 * after the file's, and everything the Secret does not mention keeps the file's value.
 *
 * Both sources stay addressable: the Secret is parsed under its own name, so a syntax error says
 * `Secret kube-system/cloud-config key cloud.conf:3`, and entries coming from it carry line numbers
 * shifted by SECRET_LINE_OFFSET in the merged document, which `relocate` maps back to the Secret
 * when problems and warnings are reported.
 */
import { ConfigError, type ConfigProblem } from '../../lib/config.ts';
import { parseGcfg, type GcfgDocument, type GcfgSection } from '../../lib/gcfg.ts';
import { warning } from '../../openstack/config/finalize.ts';
import { CCM_GLOBAL_KEYS } from './global-secret.ts';
import type { SecretRef } from './types.ts';

/** Secret keys read, in order: ours, then the in-tree provider's. */
export const SECRET_CONF_KEYS = ['cloud.conf', 'clouds.conf'] as const;

export interface SecretConf {
  text: string;
  /** How messages name it, e.g. `Secret kube-system/cloud-config key cloud.conf`. */
  source: string;
}

export const SECRET_LINE_OFFSET = 1_000_000;

/** Keys gcfg appends to instead of replacing, by section. */
const REPEATABLE: Readonly<Record<string, readonly string[]>> = {
  networking: ['public-network-name', 'internal-network-name'],
};

export interface LayeredConf {
  document: GcfgDocument;
  /** Rewrites `file:line` references to Secret entries back to the Secret. */
  relocate(text: string): string;
  relocateProblem(problem: ConfigProblem): ConfigProblem;
  warnings: string[];
}

/**
 * The cloud.conf text of a Secret's (decoded) data: `cloud.conf`, else `clouds.conf`. Throws a
 * ConfigError naming the Secret when neither is there.
 */
export function secretConf(
  ref: SecretRef,
  data: Readonly<Record<string, string>> | undefined,
): SecretConf & {
  warnings: string[];
} {
  const warnings: string[] = [];
  const name = `Secret ${ref.namespace}/${ref.name}`;
  const present = SECRET_CONF_KEYS.filter((k) => data?.[k] !== undefined);
  const key = present[0];
  if (key === undefined) {
    throw new ConfigError([
      {
        file: name,
        key: SECRET_CONF_KEYS[0],
        value: undefined,
        problem: `the Secret has neither a "${SECRET_CONF_KEYS[0]}" nor a "${SECRET_CONF_KEYS[1]}" key`,
        fix: `put the cloud.conf text under the key "${SECRET_CONF_KEYS[0]}" (kubectl create secret generic ${ref.name} -n ${ref.namespace} --from-file=cloud.conf)`,
      },
    ]);
  }
  if (present.length > 1) {
    warnings.push(warning(name, SECRET_CONF_KEYS[1], `ignored: "${key}" is read instead`));
  }
  return { text: data![key]!, source: `${name} key ${key}`, warnings };
}

/** The file's document with the Secret's cloud.conf laid over it. Throws a ConfigError for syntax errors in the Secret. */
export function overlaySecretConf(base: GcfgDocument, secret: SecretConf): LayeredConf {
  const overlay = parseGcfg(secret.text, secret.source);
  const warnings: string[] = [];
  const sections: GcfgSection[] = base.sections.map((s) => ({ ...s, entries: [...s.entries] }));
  for (const section of overlay.sections) {
    const entries = section.entries.filter((e) => {
      const own =
        section.name === 'global' && section.subsection === undefined && CCM_GLOBAL_KEYS.includes(e.name);
      if (own) {
        warnings.push(
          warning(
            `${secret.source}:${e.line}`,
            `[Global] ${e.rawName}`,
            'ignored inside the Secret: only the file can name a Secret',
          ),
        );
      }
      return !own;
    });
    const shifted = entries.map((e) => ({ ...e, line: e.line + SECRET_LINE_OFFSET }));
    const target = sections.find((s) => s.name === section.name && s.subsection === section.subsection);
    if (target) {
      // A single-valued key of the Secret replaces the file's (gcfg's last-wins) without a "set twice" warning.
      const replaced = new Set(
        shifted.map((e) => e.name).filter((n) => !REPEATABLE[section.name]?.includes(n)),
      );
      target.entries = [...target.entries.filter((e) => !replaced.has(e.name)), ...shifted];
    } else sections.push({ ...section, line: section.line + SECRET_LINE_OFFSET, entries: shifted });
  }

  const pattern = new RegExp(`${escapeRegExp(base.file)}:(\\d+)`, 'g');
  const relocate = (text: string): string =>
    text.replace(pattern, (whole, line: string) => {
      const n = Number(line);
      return n >= SECRET_LINE_OFFSET ? `${secret.source}:${n - SECRET_LINE_OFFSET}` : whole;
    });
  return {
    document: { file: base.file, sections },
    relocate,
    relocateProblem: (p) => ({
      ...p,
      file: relocate(p.file),
      problem: relocate(p.problem),
      fix: relocate(p.fix),
    }),
    warnings,
  };
}

/** No Secret: the document as is. */
export function singleConf(document: GcfgDocument): LayeredConf {
  return { document, relocate: (t) => t, relocateProblem: (p) => p, warnings: [] };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
