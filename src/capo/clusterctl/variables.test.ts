import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BadSubstitutionError,
  listVariables,
  MissingVariablesError,
  substituteVariables,
} from './variables.ts';

describe("clusterctl's variables (drone/envsubst as clusterctl calls it)", () => {
  it('substitutes ${VAR} and uses a default only when the value is empty or unset', () => {
    const t = 'a: ${A}\nb: ${B:=two}\nc: ${C:-three}\nd: ${D=four}\n';
    assert.equal(substituteVariables(t, { A: '1', B: '', C: 'x' }), 'a: 1\nb: two\nc: x\nd: four\n');
    assert.equal(substituteVariables(t, new Map([['A', '']])), 'a: \nb: two\nc: three\nd: four\n');
  });

  it('refuses to render while a variable without a default has no value, naming all of them sorted', () => {
    const t = '${ZED} ${ALPHA} ${ALPHA} ${WITH:=default}';
    assert.throws(
      () => substituteVariables(t, {}),
      (e: unknown) =>
        e instanceof MissingVariablesError &&
        e.message.startsWith('value for variables [ALPHA, ZED] is not set.'),
    );
    // An empty value is a value.
    assert.equal(substituteVariables(t, { ZED: '', ALPHA: 'a' }), ' a a default');
  });

  it('keeps $$ as one $ and never reads what follows it as a variable', () => {
    const t = 'name: $${COREOS_OPENSTACK_HOSTNAME}\nexport X=$${X%.*}\ncost: $5 and $$$${Y}\n';
    assert.equal(
      substituteVariables(t, {}),
      'name: ${COREOS_OPENSTACK_HOSTNAME}\nexport X=${X%.*}\ncost: $5 and $${Y}\n',
    );
    assert.deepEqual(listVariables(t), []);
    // $$ then a variable: one $ and the value.
    assert.equal(substituteVariables('$$${V}', { V: 'v' }), '$v');
    // A bare $VAR is text.
    assert.equal(substituteVariables('$HOME ${V}', { V: 'v' }), '$HOME v');
  });

  it('reads backslash escapes as envsubst does: \\\\ and \\/ lose the backslash, others stay', () => {
    assert.equal(substituteVariables('a\\\\b a\\/b a\\nb', {}), 'a\\b a/b a\\nb');
  });

  it('accepts the legacy spellings ${ VAR }, ${ VAR} and ${VAR }', () => {
    assert.equal(substituteVariables('${ A } ${ B} ${C }', { A: '1', B: '2', C: '3' }), '1 2 3');
    assert.deepEqual(
      listVariables('${ A }').map((v) => v.name),
      ['A'],
    );
  });

  it('lists variables as --list-variables does: sorted, required or with their default, first occurrence wins', () => {
    const t = [
      'x: ${OPENSTACK_CLOUD:=capo-e2e}',
      'y: ${CLUSTER_NAME}',
      'z: ${SSH_KEY:=""}',
      'w: ${CLUSTER_NAME:=ignored}',
      'v: ${OUTER:=pre-${INNER}-post}',
      'u: ${UPPER^^}',
    ].join('\n');
    assert.deepEqual(listVariables(t), [
      { name: 'CLUSTER_NAME', required: true, defaultValue: '' },
      { name: 'OPENSTACK_CLOUD', required: false, defaultValue: 'capo-e2e' },
      { name: 'OUTER', required: false, defaultValue: 'pre-${INNER}-post' },
      { name: 'SSH_KEY', required: false, defaultValue: '""' },
      { name: 'UPPER', required: false, defaultValue: '' },
    ]);
    // The first occurrence had no default, so the later one's does not help.
    assert.throws(() => substituteVariables(t, {}), /\[CLUSTER_NAME, UPPER\]/);
    assert.equal(
      substituteVariables(t, { CLUSTER_NAME: 'c', UPPER: 'up' }),
      'x: capo-e2e\ny: c\nz: ""\nw: c\nv: pre--post\nu: UP',
    );
  });

  it('changes case and measures length', () => {
    assert.equal(
      substituteVariables('${V^} ${V^^} ${W,} ${W,,} ${#V}', { V: 'abc', W: 'XYZ' }),
      'Abc ABC xYZ xyz 3',
    );
  });

  it('refuses what it does not read, with the line', () => {
    for (const [t, message] of [
      ['ok\n${UNCLOSED', /no closing \} at line 2/],
      ['${}', /no variable name/],
      ['${A:1:2}', /substring, pattern and replacement/],
      ['${A%.*}', /substring, pattern and replacement/],
      ['${A/x/y}', /substring, pattern and replacement/],
      ['${A:=never closed', /no closing \}/],
      ['${A B}', /bad substitution/],
    ] as const) {
      assert.throws(
        () => substituteVariables(t, { A: 'a' }),
        (e: unknown) => e instanceof BadSubstitutionError && message.test(e.message),
        t,
      );
    }
  });
});
