import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expand } from './expand.ts';

describe('expand: the kubelet’s $(VAR) expansion', () => {
  const vars = new Map([
    ['NAME', 'infra-1'],
    ['EMPTY', ''],
  ]);
  it('replaces known variables and leaves unknown ones as written', () => {
    assert.equal(expand('--cluster-name=$(NAME)', vars), '--cluster-name=infra-1');
    assert.equal(expand('$(NAME)-$(NAME)', vars), 'infra-1-infra-1');
    assert.equal(expand('x$(EMPTY)y', vars), 'xy');
    assert.equal(expand('--a=$(MISSING)', vars), '--a=$(MISSING)');
  });
  it('reads $$ as an escaped $', () => {
    assert.equal(expand('$$(NAME)', vars), '$(NAME)');
    assert.equal(expand('a$$b', vars), 'a$b');
    assert.equal(expand('$$$(NAME)', vars), '$infra-1');
  });
  it('keeps a lone $, a $ before another character and an unclosed $( as written', () => {
    assert.equal(expand('cost: 5$', vars), 'cost: 5$');
    assert.equal(expand('$HOME/x', vars), '$HOME/x');
    assert.equal(expand('$(NAME', vars), '$(NAME');
    assert.equal(expand('$(NAME $(NAME)', vars), '$(NAME $(NAME)');
  });
});
