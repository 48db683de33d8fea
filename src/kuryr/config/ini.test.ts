import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../lib/config.ts';
import { iniAll, iniLast, iniSection, parseOsloIni, substitute } from './ini.ts';

function value(text: string, group: string, key: string): string | undefined {
  const doc = parseOsloIni(text, 'kuryr.conf');
  const e = iniLast(iniSection(doc, group), key);
  if (!e) return undefined;
  const s = substitute(doc, e, group);
  assert.ok('value' in s, JSON.stringify(s));
  return s.value;
}

describe("kuryr.conf's INI (oslo.config's dialect)", () => {
  it('reads option names with underscores, which gcfg refuses', () => {
    assert.equal(value('[vif_pool]\nports_pool_min = 1\n', 'vif_pool', 'ports_pool_min'), '1');
  });

  it('keeps # and ; inside a value: comments start only a line', () => {
    const text = '# a comment\n[neutron]\n; another\npassword = p#ss;word\n';
    assert.equal(value(text, 'neutron', 'password'), 'p#ss;word');
  });

  it('takes key: value too, whichever separator comes first', () => {
    const text = '[neutron]\nauth_url: https://keystone:5000/v3\nusername = a:b\n';
    assert.equal(value(text, 'neutron', 'auth_url'), 'https://keystone:5000/v3');
    assert.equal(value(text, 'neutron', 'username'), 'a:b');
  });

  it('removes one pair of matching quotes: "" is empty, as the network operator writes unset credentials', () => {
    const text = `[neutron]\ntoken = ""\nproject = '"x"'\nname = "a" b\n`;
    assert.equal(value(text, 'neutron', 'token'), '');
    assert.equal(value(text, 'neutron', 'project'), '"x"');
    assert.equal(value(text, 'neutron', 'name'), '"a" b');
  });

  it('continues a value on lines starting with a blank, until a blank line', () => {
    const text = '[kubernetes]\nenabled_handlers = vif,\n  kuryrport,\n\tservice\n\nfoo = 1\n';
    assert.equal(value(text, 'kubernetes', 'enabled_handlers'), 'vif,\nkuryrport,\nservice');
    assert.equal(value(text, 'kubernetes', 'foo'), '1');
  });

  it('matches group names without regard to case except DEFAULT, and reads - as _ in keys', () => {
    const doc = parseOsloIni('[VIF_Pool]\nports-pool-min = 2\n[default]\ndebug = true\n', 'k');
    assert.equal(iniLast(iniSection(doc, 'vif_pool'), 'ports_pool_min')?.value, '2');
    assert.equal(iniSection(doc, 'DEFAULT'), undefined, '[default] is not [DEFAULT]');
  });

  it('keeps every value of a repeated key in order, the last one first for single-valued options', () => {
    const doc = parseOsloIni('[a]\nk = 1\n[b]\nx = 0\n[a]\nk = 2\n', 'k');
    assert.deepEqual(
      iniAll(iniSection(doc, 'a'), 'k').map((e) => [e.value, e.line]),
      [
        ['1', 2],
        ['2', 6],
      ],
    );
    assert.equal(iniLast(iniSection(doc, 'a'), 'k')?.value, '2');
  });

  it("substitutes oslo's templates: $$ is $, $name from [DEFAULT], ${group.name}", () => {
    const text =
      '[DEFAULT]\nbase = /etc\n[neutron]\npassword = a$$b\ncafile = $base/ca.pem\nx = ${neutron.password}!\n';
    assert.equal(value(text, 'neutron', 'password'), 'a$b');
    assert.equal(value(text, 'neutron', 'cafile'), '/etc/ca.pem');
    assert.equal(value(text, 'neutron', 'x'), 'a$b!');
    const doc = parseOsloIni('[neutron]\npassword = a$b\n', 'kuryr.conf');
    const s = substitute(doc, iniLast(iniSection(doc, 'neutron'), 'password')!, 'neutron');
    assert.ok('problem' in s);
    assert.equal(s.problem.file, 'kuryr.conf:2');
    assert.equal(s.problem.value, '[REDACTED]', 'a password is never printed');
    assert.match(s.problem.fix, /write \$\$ for a literal \$/);
  });

  it('reports every syntax error with file:line and a fix, as one ConfigError', () => {
    const text = '  indented = 1\nkey = 1\n[vif_pool\n[]\n[ok]\nno separator\n= 3\n';
    try {
      parseOsloIni(text, 'kuryr.conf');
      assert.fail('no error');
    } catch (err) {
      assert.ok(ConfigError.is(err));
      assert.deepEqual(
        err.problems.map((p) => p.file),
        ['kuryr.conf:1', 'kuryr.conf:2', 'kuryr.conf:3', 'kuryr.conf:4', 'kuryr.conf:6', 'kuryr.conf:7'],
      );
      assert.match(
        err.message,
        /kuryr\.conf:2: key comes before any section header. Fix: put it under its group/,
      );
      assert.match(
        err.message,
        /kuryr\.conf:3: a section header must end with \]. Fix: write it as \[vif_pool\]/,
      );
    }
  });
});
