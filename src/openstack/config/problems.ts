/**
 * Building {@link ConfigProblem}s that are safe to print. parseConfig redacts secret-named keys for
 * zod issues; problems built by hand here get the same treatment, plus two cases redact.ts's key test
 * does not cover: environment names (`OS_TOKEN` reads as `ostoken`) and credentials inside a URL,
 * which are scrubbed from the problem and fix texts too (a fix may quote a corrected URL).
 */
import { ConfigError } from '../../lib/config.ts';
import type { ConfigProblem } from '../../lib/config.ts';
import { isSecretKey, REDACTED } from '../../lib/redact.ts';

/**
 * Judged by the last segment only: redact.ts treats a whole `auth` map as secret, but a problem shows
 * one leaf whose name is known, and `clouds.x.auth.auth_url` must stay readable while
 * `clouds.x.auth.password` must not.
 */
export function isSecretName(key: string): boolean {
  const last =
    key
      .split(/[.\s[\]]+/)
      .filter((part) => part !== '')
      .pop() ?? '';
  return isSecretKey(last) || isSecretKey(last.replace(/^OS_/i, ''));
}

const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi;

/** `https://user:pw@host` → `https://[REDACTED]@host`, anywhere in a text. */
export function scrubUrls(text: string): string {
  return text.replace(URL_USERINFO, `$1${REDACTED}@`);
}

/** The value as it may appear in a message. */
export function safeValue(key: string, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (isSecretName(key)) return REDACTED;
  return typeof value === 'string' ? scrubUrls(value) : value;
}

export function problem(file: string, key: string, value: unknown, text: string, fix: string): ConfigProblem {
  return { file, key, value: safeValue(key, value), problem: scrubUrls(text), fix: scrubUrls(fix) };
}

/** Collects problems so a user sees everything wrong with a file in one run, not one per run. */
export class Problems {
  readonly list: ConfigProblem[] = [];

  add(file: string, key: string, value: unknown, text: string, fix: string): void {
    this.list.push(problem(file, key, value, text, fix));
  }

  /** Runs `fn`, folding a ConfigError it throws into this list. */
  collect<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (!ConfigError.is(err)) throw err;
      this.list.push(...err.problems);
      return undefined;
    }
  }

  /** Throws every problem at once, with the warnings found so far (they often explain a problem). */
  throwIfAny(warnings: readonly string[] = []): void {
    if (this.list.length > 0) throw new ConfigError(this.list, warnings);
  }
}
