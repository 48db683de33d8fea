/**
 * Go's time.ParseDuration, which cloud.conf values such as `[Metadata] request-timeout` and
 * `[LoadBalancer] monitor-delay` go through in OCCM: a sequence of decimal numbers each with a unit
 * (`ns`, `us`/`µs`, `ms`, `s`, `m`, `h`), optionally signed; a bare `0` is allowed, any other bare
 * number is not. Returns milliseconds, or undefined when Go would reject the text.
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  '\u00b5s': 1e-3,
  '\u03bcs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+\.?\d*|\.\d+)([a-z\u00b5\u03bc]+)/gy;

export function parseGoDuration(text: string): number | undefined {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s.startsWith('-')) sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let end = 0;
  for (let match = PART.exec(s); match; match = PART.exec(s)) {
    const unit = UNIT_MS[match[2]!];
    if (unit === undefined) return undefined;
    total += Number(match[1]) * unit;
    end = PART.lastIndex;
  }
  if (end !== s.length) return undefined;
  return sign * total;
}
