import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from 'commander';
import { kubeApiBurst, kubeApiQps } from './upstream-flags.ts';

describe('--kube-api-qps and --kube-api-burst, read as client-go reads rest.Config', () => {
  it('a rate is a rate; 0 is client-go’s default of 5; a negative one turns the limiter off (0 here)', () => {
    assert.equal(kubeApiQps('50'), 50);
    assert.equal(kubeApiQps('0.5'), 0.5);
    assert.equal(kubeApiQps('0'), 5);
    assert.equal(kubeApiQps('-1'), 0);
    assert.throws(() => kubeApiQps('fast'), InvalidArgumentError);
    assert.throws(() => kubeApiQps(''), InvalidArgumentError);
  });

  it('a burst is a whole number; 0 is client-go’s default of 10', () => {
    assert.equal(kubeApiBurst('30'), 30);
    assert.equal(kubeApiBurst('0'), 10);
    assert.throws(() => kubeApiBurst('2.5'), InvalidArgumentError);
    assert.throws(() => kubeApiBurst('-1'), InvalidArgumentError);
  });
});
