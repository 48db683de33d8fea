import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FeatureGate, Infrastructure, KubeControllerManager } from './api/index.ts';
import { cloudLoopsOwner } from './gate.ts';
import { imagesFromConfigMap, imagesFromJson } from './images.ts';
import { DEFAULT_IMAGES } from './operands/images.ts';
import {
  DEFAULT_INFRASTRUCTURE_NAME,
  enabledFeatureGates,
  operandPlatform,
  renderInput,
} from './render-input.ts';

const infra = (status: Infrastructure['status']): Infrastructure => ({ spec: {}, status });
const kcm = (status?: string): KubeControllerManager => ({
  spec: {},
  status: status
    ? {
        conditions: [
          {
            type: 'CloudControllerOwner',
            status: status as 'True',
            lastTransitionTime: '2024-01-01T00:00:00Z',
          },
        ],
      }
    : {
        conditions: [
          { type: 'StaticPodsAvailable', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' },
        ],
      },
});

describe('who runs the cloud loops', () => {
  it('the CCM: without KubeControllerManager, without its condition, or once it is False', () => {
    assert.equal(cloudLoopsOwner(undefined).owner, 'ccm');
    assert.equal(cloudLoopsOwner(kcm()).owner, 'ccm');
    assert.equal(cloudLoopsOwner(kcm('False')).owner, 'ccm');
  });
  it('kube-controller-manager while the condition is True or Unknown', () => {
    assert.deepEqual(cloudLoopsOwner(kcm('True')), {
      owner: 'in-tree',
      why: 'kube-controller-manager runs the cloud loops (KubeControllerManager cluster CloudControllerOwner=True)',
    });
    assert.equal(cloudLoopsOwner(kcm('Unknown')).owner, 'in-tree');
  });
});

describe('the renderers’ input', () => {
  it('has operands only for the platforms that have a CCM', () => {
    assert.equal(operandPlatform(infra({ platformStatus: { type: 'OpenStack' } })), 'OpenStack');
    for (const type of ['None', 'External', 'BareMetal', undefined]) {
      assert.equal(operandPlatform(infra({ platformStatus: { type } })), undefined, String(type));
    }
    assert.equal(operandPlatform(infra({})), undefined);
    assert.equal(operandPlatform(undefined), undefined);
  });

  it('takes the gates of this release, else the only entry, else a custom set', () => {
    const fg = (status?: FeatureGate['status'], spec: FeatureGate['spec'] = {}): FeatureGate => ({
      spec,
      status,
    });
    const two = fg({
      featureGates: [
        { version: '4.14.9', enabled: [{ name: 'Old' }] },
        { version: '4.14.10', enabled: [{ name: 'B' }, { name: 'A' }] },
      ],
    });
    assert.deepEqual(enabledFeatureGates(two, '4.14.10'), ['A', 'B']);
    assert.deepEqual(enabledFeatureGates(two, 'unknown'), []);
    assert.deepEqual(
      enabledFeatureGates(fg({ featureGates: [{ version: 'x', enabled: [{ name: 'C' }] }] }), 'unknown'),
      ['C'],
    );
    assert.deepEqual(
      enabledFeatureGates(
        fg(undefined, { featureSet: 'CustomNoUpgrade', customNoUpgrade: { enabled: ['Z', 'Y'] } }),
        'v',
      ),
      ['Y', 'Z'],
    );
    assert.deepEqual(enabledFeatureGates(undefined, 'v'), []);
  });

  it('reads the Infrastructure and the Proxy', () => {
    const input = renderInput({
      infrastructure: infra({
        infrastructureName: 'mycluster-x7k2p',
        controlPlaneTopology: 'SingleReplica',
        platformStatus: { type: 'OpenStack', openstack: { cloudName: 'openstack' } },
      }),
      platform: 'OpenStack',
      proxy: { spec: {}, status: { httpsProxy: 'http://proxy:3128', noProxy: '.svc' } },
      featureGate: undefined,
      images: { cloudControllerManagerOpenStack: 'img' },
      openstackCcm: 'shiftstack',
      namespace: 'openshift-cloud-controller-manager',
      releaseVersion: '4.16.0',
    });
    assert.deepEqual(input, {
      platform: 'OpenStack',
      platformStatus: { type: 'OpenStack', openstack: { cloudName: 'openstack' } },
      infrastructureName: 'mycluster-x7k2p',
      images: { cloudControllerManagerOpenStack: 'img' },
      openstackCcm: 'shiftstack',
      namespace: 'openshift-cloud-controller-manager',
      singleReplica: true,
      featureGates: [],
      proxy: { httpsProxy: 'http://proxy:3128', noProxy: '.svc' },
    });
  });
});

describe('the renderers’ input without an Infrastructure name', () => {
  it('is OCCM’s default cluster name', () => {
    const input = renderInput({
      infrastructure: infra({ platformStatus: { type: 'OpenStack' } }),
      platform: 'OpenStack',
      proxy: undefined,
      featureGate: undefined,
      images: {},
      openstackCcm: 'shiftstack',
      namespace: 'ns',
      releaseVersion: 'v',
    });
    assert.equal(input.infrastructureName, DEFAULT_INFRASTRUCTURE_NAME);
    assert.equal(input.singleReplica, false);
  });
});

describe('images.json', () => {
  it('is an object from image key to image, laid over the defaults; unknown keys are returned', () => {
    assert.deepEqual(
      imagesFromJson('{"cloudControllerManagerOpenStack":"quay.io/x","kubeRbacProxy":"k"}', 'f'),
      {
        images: { ...DEFAULT_IMAGES, cloudControllerManagerOpenStack: 'quay.io/x', kubeRbacProxy: 'k' },
        unknownKeys: ['kubeRbacProxy'],
      },
    );
  });

  it('a problem names where it was read and the key', () => {
    assert.throws(
      () => imagesFromJson('{', 'f', 'data.images.json'),
      /^ConfigError: f: key "data.images.json": not JSON/,
    );
    assert.throws(() => imagesFromJson('[1]', 'f'), /^ConfigError: f/);
    assert.throws(() => imagesFromJson('{"a":1}', 'f'), /key "a".*write the image reference/);
    assert.throws(
      () => imagesFromConfigMap({ other: '{}' }, 'ConfigMap ns/cloud-controller-manager-images'),
      /ConfigMap ns\/cloud-controller-manager-images: key "data.images.json": missing/,
    );
  });
});
