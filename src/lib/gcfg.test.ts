import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from './config.ts';
import type { ConfigProblem } from './config.ts';
import {
  formatGcfg,
  gcfgAll,
  gcfgBool,
  gcfgDelete,
  gcfgDeleteSection,
  gcfgEnsureSection,
  gcfgQuote,
  gcfgLast,
  gcfgSet,
  gcfgSection,
  gcfgSubsections,
  gcfgWhere,
  parseGcfg,
  readGcfgFile,
} from './gcfg.ts';

function problems(text: string): ConfigProblem[] {
  try {
    parseGcfg(text, 'cloud.conf');
  } catch (err) {
    assert.ok(ConfigError.is(err), String(err));
    return [...err.problems];
  }
  assert.fail('expected a ConfigError');
}

describe('gcfg', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-gcfg-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('reads sections, subsections, keys and line numbers', () => {
    const doc = parseGcfg(
      [
        '; full-line comment',
        '# another',
        '[Global]',
        'auth-url = https://keystone:5000/v3   ; inline comment',
        '  Region=RegionOne',
        '',
        '[LoadBalancerClass "Internal"]',
        'subnet-id = abc # trailing',
        '[loadbalancerclass "internal"]',
        'subnet-id = def',
      ].join('\n'),
      'cloud.conf',
    );
    const global = gcfgSection(doc, 'GLOBAL');
    assert.equal(global?.rawName, 'Global');
    assert.equal(gcfgLast(global, 'AUTH-URL')?.value, 'https://keystone:5000/v3');
    assert.equal(gcfgLast(global, 'auth-url')?.line, 4);
    assert.equal(gcfgLast(global, 'region')?.value, 'RegionOne');
    assert.equal(gcfgWhere(doc, 5), 'cloud.conf:5');
    // Subsection names are case-sensitive: two distinct classes.
    const classes = gcfgSubsections(doc, 'LoadBalancerClass');
    assert.deepEqual(
      classes.map((c) => [c.subsection, gcfgLast(c, 'subnet-id')?.value]),
      [
        ['Internal', 'abc'],
        ['internal', 'def'],
      ],
    );
    assert.equal(gcfgSection(doc, 'LoadBalancerClass', 'Internal')?.line, 7);
  });

  it('unquotes values and keeps inner blanks and comment characters inside quotes', () => {
    const doc = parseGcfg(
      [
        '[s]',
        'a = "  padded  "',
        'b = say "hello; # world" now',
        'c = "tab\\there\\nnew \\"q\\" back\\\\slash"',
        'd = one   two',
        'e =',
        'f = first \\',
        '   second',
        'g = "x"   ',
      ].join('\r\n'),
      'c.conf',
    );
    const s = gcfgSection(doc, 's');
    assert.equal(gcfgLast(s, 'a')?.value, '  padded  ');
    assert.equal(gcfgLast(s, 'b')?.value, 'say hello; # world now');
    assert.equal(gcfgLast(s, 'c')?.value, 'tab\there\nnew "q" back\\slash');
    assert.equal(gcfgLast(s, 'd')?.value, 'one   two');
    assert.equal(gcfgLast(s, 'e')?.value, '');
    assert.equal(gcfgLast(s, 'f')?.value, 'first    second');
    assert.equal(gcfgLast(s, 'g')?.value, 'x');
    assert.equal(gcfgLast(s, 'g')?.line, 9);
  });

  it('keeps repeated keys in order, merges repeated sections, and treats a bare key as blank', () => {
    const doc = parseGcfg(
      [
        '[Networking]',
        'public-network-name = public',
        'public-network-name = ext',
        '[Global]',
        'use-clouds',
        '[networking]',
        'public-network-name = third',
        'internal-network-name = a',
        'internal-network-name',
        'internal-network-name = b',
      ].join('\n'),
      'cloud.conf',
    );
    const net = gcfgSection(doc, 'Networking');
    assert.equal(doc.sections.length, 2);
    assert.deepEqual(
      gcfgAll(net, 'public-network-name').map((e) => e.value),
      ['public', 'ext', 'third'],
    );
    assert.equal(gcfgLast(net, 'public-network-name')?.value, 'third');
    // A blank entry resets a multi-valued key, as gcfg does.
    assert.deepEqual(
      gcfgAll(net, 'internal-network-name').map((e) => e.value),
      ['b'],
    );
    const useClouds = gcfgLast(gcfgSection(doc, 'global'), 'use-clouds');
    assert.equal(useClouds?.implicit, true);
    assert.equal(useClouds && gcfgBool(useClouds), true);
  });

  it('reads gcfg booleans', () => {
    const doc = parseGcfg('[s]\na = Yes\nb = off\nc = 1\nd = maybe\n', 'x');
    const s = gcfgSection(doc, 's');
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((k) => gcfgBool(gcfgLast(s, k)!)),
      [true, false, true, undefined],
    );
  });

  it('reports every syntax error with file:line and a fix', () => {
    const ps = problems(
      [
        'orphan = 1',
        '[Global]',
        'auth_url = https://x',
        'password = "unterminated',
        '[Global.sub]',
        '[Bad "x" extra]',
        '[LoadBalancerClass ""]',
        '= 3',
        'path = C:\\certs',
        'ok = fine',
        'q = "bad \\q escape"',
        '[ ]',
      ].join('\n'),
    );
    const byLine = new Map(ps.map((p) => [p.file, p]));
    assert.match(byLine.get('cloud.conf:1')?.problem ?? '', /before any section header/);
    assert.match(byLine.get('cloud.conf:1')?.fix ?? '', /\[Global\]/);
    assert.match(byLine.get('cloud.conf:3')?.fix ?? '', /did you mean "auth-url"/);
    assert.equal(byLine.get('cloud.conf:3')?.key, 'auth');
    assert.match(byLine.get('cloud.conf:4')?.problem ?? '', /closing double quote/);
    assert.match(byLine.get('cloud.conf:5')?.fix ?? '', /\[Global "sub"\]/);
    assert.match(byLine.get('cloud.conf:6')?.problem ?? '', /expected "]"/);
    assert.match(byLine.get('cloud.conf:7')?.fix ?? '', /\[LoadBalancerClass\] without quotes/);
    assert.match(byLine.get('cloud.conf:8')?.problem ?? '', /unexpected character "="/);
    assert.match(byLine.get('cloud.conf:9')?.fix ?? '', /double quotes/);
    assert.match(byLine.get('cloud.conf:11')?.problem ?? '', /unknown escape sequence "\\q"/);
    assert.match(byLine.get('cloud.conf:12')?.problem ?? '', /expected a section name/);
    assert.equal(byLine.has('cloud.conf:10'), false);
    for (const p of ps) assert.ok(p.fix.length > 0);
  });

  it('never puts the text of a broken line into an error', () => {
    const ps = problems('[Global]\npassword = "hunter2-secret\n');
    assert.ok(!JSON.stringify(ps).includes('hunter2'));
    assert.ok(!new ConfigError(ps).message.includes('hunter2'));
  });

  it('reads a file, skipping a BOM, and reports a missing one', async () => {
    const path = join(dir, 'cloud.conf');
    await writeFile(path, '\uFEFF[Global]\nregion = r1\n');
    const doc = await readGcfgFile(path);
    assert.equal(doc.file, path);
    assert.equal(gcfgLast(gcfgSection(doc, 'Global'), 'region')?.value, 'r1');
    await assert.rejects(readGcfgFile(join(dir, 'nope.conf')), /nope\.conf: the file does not exist/);
  });
});

describe('formatGcfg', () => {
  const text = [
    '; cloud.conf written by hand',
    '',
    '[Global]',
    '  auth-url = "https://keystone:5000/v3"   ; the public endpoint',
    '  region=RegionOne',
    'secret-name = openstack-credentials',
    '',
    '# block storage is CSI now',
    '[BlockStorage]',
    'bs-version = v3',
    '; inside',
    'ignore-volume-az = yes',
    '',
    '[LoadBalancer]',
    'use-octavia = true # long gone',
    'floating-network-id = "a b"',
    '',
    '[LoadBalancerClass "ext \\"net\\""]',
    'subnet-id = c',
    '; trailing comment',
    '',
  ].join('\n');

  it('writes a document it did not change byte for byte', () => {
    assert.equal(formatGcfg(parseGcfg(text, 'cloud.conf')), text);
    const crlf = '[Global]\r\nregion = R \\\r\n  One\r\nkey\r\n; end';
    assert.equal(formatGcfg(parseGcfg(crlf, 'cloud.conf')), crlf);
    assert.equal(formatGcfg(parseGcfg('', 'cloud.conf')), '');
  });

  it('changes only what was edited: a value in place, removed lines and sections, added keys after the last one', () => {
    const doc = parseGcfg(text, 'cloud.conf');
    gcfgSet(doc, 'global', 'AUTH-URL', 'https://other:5000/v3');
    gcfgDelete(doc, 'Global', 'secret-name');
    gcfgSet(doc, 'Global', 'use-clouds', 'true');
    gcfgSet(doc, 'Global', 'cloud', 'my cloud ; x');
    gcfgDeleteSection(doc, 'BlockStorage');
    gcfgDelete(doc, 'LoadBalancer', 'use-octavia');
    gcfgSet(doc, 'LoadBalancer', 'floating-network-id', 'plain');
    gcfgSet(doc, 'LoadBalancer', 'max-shared-lb', '1');
    gcfgSet(doc, 'Metadata', 'search-order', 'configDrive,metadataService');
    assert.equal(
      formatGcfg(doc),
      [
        '; cloud.conf written by hand',
        '',
        '[Global]',
        '  auth-url = https://other:5000/v3   ; the public endpoint',
        '  region=RegionOne',
        '  use-clouds = true',
        '  cloud = "my cloud ; x"',
        '',
        '[LoadBalancer]',
        'floating-network-id = plain',
        'max-shared-lb = 1',
        '',
        '[LoadBalancerClass "ext \\"net\\""]',
        'subnet-id = c',
        '; trailing comment',
        '',
        '[Metadata]',
        'search-order = configDrive,metadataService',
        '',
      ].join('\n'),
    );
  });

  it('writes what gcfg reads back as the same values', () => {
    const doc = parseGcfg(text, 'cloud.conf');
    const odd = [
      '',
      ' padded ',
      'a;b',
      'x#y',
      'say "hi"',
      'C:\\certs',
      'two\nlines',
      'tab\there',
      'ünïcode ✓',
    ];
    odd.forEach((v, i) => gcfgSet(doc, 'Odd', `k${i}`, v));
    gcfgSet(doc, 'Global', 'region', ' spaced ');
    const back = parseGcfg(formatGcfg(doc), 'cloud.conf');
    odd.forEach((v, i) => assert.equal(gcfgLast(gcfgSection(back, 'odd'), `k${i}`)?.value, v));
    assert.equal(gcfgLast(gcfgSection(back, 'global'), 'region')?.value, ' spaced ');
    assert.equal(gcfgLast(gcfgSection(back, 'LoadBalancerClass', 'ext "net"'), 'subnet-id')?.value, 'c');
  });

  it('quotes only values that need it', () => {
    assert.equal(gcfgQuote('openstack'), 'openstack');
    assert.equal(gcfgQuote('/etc/openstack/secret/clouds.yaml'), '/etc/openstack/secret/clouds.yaml');
    assert.equal(gcfgQuote('inner blanks ok'), 'inner blanks ok');
    assert.equal(gcfgQuote(''), '""');
    assert.equal(gcfgQuote(' x'), '" x"');
    assert.equal(gcfgQuote('a#b'), '"a#b"');
    assert.equal(gcfgQuote('a\\b'), '"a\\\\b"');
    assert.throws(() => gcfgQuote('a\rb'), TypeError);
  });

  it('rewrites a continued or implicit entry whole, and keeps a last line without newline so', () => {
    const doc = parseGcfg('[Global]\n  region = Region\\\nOne ; c\nflag\nlast = 1', 'cloud.conf');
    gcfgSet(doc, 'Global', 'region', 'R2');
    gcfgSet(doc, 'Global', 'flag', 'false');
    gcfgSet(doc, 'Global', 'last', '2');
    assert.equal(formatGcfg(doc), '[Global]\n  region = R2\nflag = false\nlast = 2');
    gcfgSet(doc, 'Global', 'added', 'x');
    assert.equal(formatGcfg(doc), '[Global]\n  region = R2\nflag = false\nlast = 2\nadded = x\n');
  });

  it('adds to a section whose entries all went, and writes a document built in code', () => {
    const doc = parseGcfg('[Global]\nsecret-name = s\n\n[Other]\nk = v\n', 'cloud.conf');
    gcfgDelete(doc, 'Global', 'secret-name');
    gcfgSet(doc, 'Global', 'use-clouds', 'true');
    assert.equal(formatGcfg(doc), '[Global]\nuse-clouds = true\n\n[Other]\nk = v\n');
    const fresh = { file: 'x', sections: [] };
    gcfgEnsureSection(fresh, 'Global');
    gcfgSet(fresh, 'Global', 'k', 'v');
    gcfgSet(fresh, 'LoadBalancerClass', 'subnet-id', 's', 'my "class"');
    assert.equal(
      formatGcfg(fresh),
      '[Global]\nk = v\n\n[LoadBalancerClass "my \\"class\\""]\nsubnet-id = s\n',
    );
  });
});
