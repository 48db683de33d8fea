/**
 * The kubelet's `$(VAR)` expansion (Kubernetes' `third_party/forked/golang/expansion`), used for a
 * container's env values (against the variables defined before them) and its command and args
 * (against the container's whole environment):
 *
 * - `$(NAME)` is replaced by NAME's value; an unknown NAME is left as written, `$(NAME)`;
 * - `$$` is an escaped `$`: `$$(NAME)` gives `$(NAME)`, never expanded;
 * - a `$` before anything else, or a `$(` never closed, stays as written.
 */

/** `input` with every `$(NAME)` that `vars` knows replaced, as the kubelet expands it. */
export function expand(input: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === '$') {
      out += '$';
    } else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close < 0) {
        out += '$(';
      } else {
        const name = input.slice(cursor + 2, close);
        out += vars.get(name) ?? `$(${name})`;
        advance = close - cursor;
      }
    } else {
      out += `$${next}`;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}
