import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { shutdownSignal } from './signals.ts';

describe('shutdown signal', () => {
  it('aborts on the first SIGTERM/SIGINT and exits with 1 on the second', () => {
    const source = new EventEmitter();
    const exits: number[] = [];
    const s = shutdownSignal({ source, exit: (c) => exits.push(c) });
    assert.equal(s.signal.aborted, false);
    source.emit('SIGTERM');
    assert.equal(s.signal.aborted, true);
    assert.match((s.signal.reason as Error).message, /SIGTERM/);
    assert.deepEqual(exits, []);
    source.emit('SIGINT');
    assert.deepEqual(exits, [1]);
    s.dispose();
    assert.equal(source.listenerCount('SIGTERM'), 0);
  });
});
