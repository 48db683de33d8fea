/**
 * kubectl's generator commands (`kubectl create namespace|secret|configmap|service|deployment|
 * job|cronjob|role|…`, `create token`, `drain`) send their objects as Kubernetes protobuf; the
 * emulator must take them as a real API server does and store what kubectl would see there.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { selfSignedCert } from '../../src/sim/kube/tls.ts';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from './kubectl.ts';

describe(
  'kubectl generator commands (protobuf bodies) against the emulator',
  { skip: kubectlMissing() },
  () => {
    let env: KubectlEnv;
    const kubectl = (...args: string[]) => env.kubectl(...args);
    const json = async (...args: string[]): Promise<any> =>
      JSON.parse(await kubectl('get', ...args, '-o', 'json'));

    before(async () => {
      env = await startKubectlEnv();
    });
    after(async () => env.close());

    it('creates a namespace, secrets, a configmap and a service account', async () => {
      assert.match(await kubectl('create', 'namespace', 'gen'), /namespace\/gen created/);
      assert.equal((await json('namespace', 'gen')).status.phase, 'Active');
      await kubectl(
        'create',
        'secret',
        'generic',
        's',
        '-n',
        'gen',
        '--from-literal=a=b',
        '--from-literal=c=',
      );
      assert.equal(
        await kubectl('get', 'secret', 's', '-n', 'gen', '-o', 'jsonpath={.data.a}'),
        Buffer.from('b').toString('base64'),
      );
      const s = await json('secret', 's', '-n', 'gen');
      assert.equal(s.type, 'Opaque');
      assert.equal(s.data.c, '', 'an empty value stays a key');

      const cert = selfSignedCert(['example.com']);
      await writeFile(join(env.k.dir, 'tls.crt'), cert.certPem);
      await writeFile(join(env.k.dir, 'tls.key'), cert.keyPem);
      await kubectl(
        'create',
        'secret',
        'tls',
        't',
        '-n',
        'gen',
        `--cert=${join(env.k.dir, 'tls.crt')}`,
        `--key=${join(env.k.dir, 'tls.key')}`,
      );
      const t = await json('secret', 't', '-n', 'gen');
      assert.equal(t.type, 'kubernetes.io/tls');
      assert.equal(Buffer.from(t.data['tls.crt'], 'base64').toString(), cert.certPem);

      await kubectl(
        'create',
        'secret',
        'docker-registry',
        'd',
        '-n',
        'gen',
        '--docker-username=u',
        '--docker-password=p',
        '--docker-server=r.example.com',
      );
      const d = await json('secret', 'd', '-n', 'gen');
      assert.equal(d.type, 'kubernetes.io/dockerconfigjson');
      assert.equal(
        JSON.parse(Buffer.from(d.data['.dockerconfigjson'], 'base64').toString()).auths['r.example.com']
          .username,
        'u',
      );

      await kubectl('create', 'configmap', 'c', '-n', 'gen', '--from-literal=k=v');
      assert.deepEqual((await json('configmap', 'c', '-n', 'gen')).data, { k: 'v' });
      await kubectl('create', 'serviceaccount', 'robot', '-n', 'gen');
      assert.equal((await json('serviceaccount', 'robot', '-n', 'gen')).metadata.name, 'robot');
    });

    it('creates every kind of service, and a NodePort service gets its node port', async () => {
      await kubectl('create', 'service', 'clusterip', 'cip', '-n', 'gen', '--tcp=80:8080');
      const cip = await json('service', 'cip', '-n', 'gen');
      assert.deepEqual(cip.spec.ports[0], { name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 });
      assert.deepEqual(cip.spec.selector, { app: 'cip' });
      assert.match(cip.spec.clusterIP, /^10\.96\./);
      await kubectl('create', 'service', 'nodeport', 'np', '-n', 'gen', '--tcp=80:http');
      const np = await json('service', 'np', '-n', 'gen');
      assert.equal(np.spec.type, 'NodePort');
      assert.equal(np.spec.ports[0].targetPort, 'http', 'a named target port stays a string');
      assert.ok(np.spec.ports[0].nodePort >= 30000 && np.spec.ports[0].nodePort <= 32767);
      await kubectl('create', 'service', 'loadbalancer', 'lb', '-n', 'gen', '--tcp=443:8443');
      assert.equal((await json('service', 'lb', '-n', 'gen')).spec.type, 'LoadBalancer');
      await kubectl('create', 'service', 'externalname', 'en', '-n', 'gen', '--external-name=db.example.com');
      assert.equal((await json('service', 'en', '-n', 'gen')).spec.externalName, 'db.example.com');
    });

    it('creates workloads that keep replicas, images and labels', async () => {
      await kubectl(
        'create',
        'deployment',
        'web',
        '-n',
        'gen',
        '--image=nginx:1.27',
        '--replicas=3',
        '--port=80',
      );
      const dep = await json('deployment', 'web', '-n', 'gen');
      assert.equal(dep.spec.replicas, 3);
      assert.deepEqual(dep.spec.selector, { matchLabels: { app: 'web' } });
      assert.deepEqual(dep.metadata.labels, { app: 'web' });
      assert.equal(dep.spec.template.spec.containers[0].image, 'nginx:1.27');
      assert.equal(dep.spec.template.spec.containers[0].ports[0].containerPort, 80);
      assert.equal(dep.spec.strategy.type, 'RollingUpdate');
      await kubectl('create', 'deployment', 'idle', '-n', 'gen', '--image=nginx', '--replicas=0');
      assert.equal(
        (await json('deployment', 'idle', '-n', 'gen')).spec.replicas,
        0,
        'replicas 0 is not "unset"',
      );

      await kubectl('create', 'job', 'once', '-n', 'gen', '--image=busybox', '--', 'echo', 'hi');
      const job = await json('job', 'once', '-n', 'gen');
      assert.deepEqual(job.spec.template.spec.containers[0].command, ['echo', 'hi']);
      assert.equal(job.spec.template.spec.restartPolicy, 'Never');
      assert.equal(job.spec.template.metadata.labels['batch.kubernetes.io/job-name'], 'once');
      assert.match(await kubectl('get', 'jobs', '-n', 'gen'), /once\s+Running\s+0\/1/);
      await kubectl('create', 'cronjob', 'tick', '-n', 'gen', '--image=busybox', '--schedule=*/5 * * * *');
      const cj = await json('cronjob', 'tick', '-n', 'gen');
      assert.equal(cj.spec.schedule, '*/5 * * * *');
      assert.equal(cj.spec.jobTemplate.spec.template.spec.restartPolicy, 'OnFailure');
    });

    it('creates RBAC objects', async () => {
      await kubectl(
        'create',
        'role',
        'reader',
        '-n',
        'gen',
        '--verb=get,list',
        '--resource=pods,deployments.apps',
      );
      const role = await json('role', 'reader', '-n', 'gen');
      assert.deepEqual(role.rules, [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
      ]);
      await kubectl(
        'create',
        'rolebinding',
        'rb',
        '-n',
        'gen',
        '--role=reader',
        '--serviceaccount=gen:robot',
      );
      const rb = await json('rolebinding', 'rb', '-n', 'gen');
      assert.deepEqual(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' });
      assert.deepEqual(rb.subjects, [{ kind: 'ServiceAccount', name: 'robot', namespace: 'gen' }]);
      await kubectl('create', 'clusterrole', 'cr', '--verb=get', '--non-resource-url=/healthz');
      assert.deepEqual((await json('clusterrole', 'cr')).rules, [
        { nonResourceURLs: ['/healthz'], verbs: ['get'] },
      ]);
      await kubectl('create', 'clusterrolebinding', 'crb', '--clusterrole=cr', '--user=alice');
      assert.deepEqual((await json('clusterrolebinding', 'crb')).subjects, [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
      ]);
    });

    it('creates a quota, a priority class, a disruption budget and an ingress', async () => {
      await kubectl('create', 'quota', 'q', '-n', 'gen', '--hard=pods=2,requests.cpu=500m');
      assert.deepEqual((await json('quota', 'q', '-n', 'gen')).spec.hard, {
        pods: '2',
        'requests.cpu': '500m',
      });
      await kubectl('create', 'priorityclass', 'high', '--value=1000', '--description=important');
      const pc = await json('priorityclass', 'high');
      assert.deepEqual(
        [pc.value, pc.description, pc.preemptionPolicy],
        [1000, 'important', 'PreemptLowerPriority'],
      );
      assert.match(await kubectl('get', 'pc', 'high'), /high\s+1000\s+false\s+\S+\s+PreemptLowerPriority/);
      await kubectl(
        'create',
        'poddisruptionbudget',
        'pdb',
        '-n',
        'gen',
        '--selector=app=web',
        '--min-available=50%',
      );
      const pdb = await json('pdb', 'pdb', '-n', 'gen');
      assert.equal(pdb.spec.minAvailable, '50%');
      assert.deepEqual(pdb.spec.selector, { matchLabels: { app: 'web' } });
      await kubectl(
        'create',
        'ingress',
        'ing',
        '-n',
        'gen',
        '--rule=web.example.com/=web:80',
        '--rule=api.example.com/v1*=api:http',
      );
      const ing = await json('ingress', 'ing', '-n', 'gen');
      assert.deepEqual(ing.spec.rules[0].http.paths[0], {
        path: '/',
        pathType: 'Exact',
        backend: { service: { name: 'web', port: { number: 80 } } },
      });
      assert.deepEqual(ing.spec.rules[1].http.paths[0].backend.service.port, { name: 'http' });
      assert.equal(ing.spec.rules[1].http.paths[0].pathType, 'Prefix');
      assert.match(
        await kubectl('get', 'ingress', '-n', 'gen'),
        /ing\s+<none>\s+web\.example\.com,api\.example\.com\s+80/,
      );
    });

    it('creates a service account token that the server accepts', async () => {
      const token = (await kubectl('create', 'token', 'robot', '-n', 'gen', '--duration=15m')).trim();
      const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
      assert.equal(claims.sub, 'system:serviceaccount:gen:robot');
      assert.equal(claims.exp - claims.iat, 900);
      // The token authenticates as the ServiceAccount, which RBAC then holds to what it is granted.
      const unbound = await env.start(['--token', token, 'get', 'namespace', 'gen']).done;
      assert.notEqual(unbound.code, 0);
      assert.match(unbound.stderr, /User "system:serviceaccount:gen:robot" cannot get resource "namespaces"/);
      await kubectl('create', 'clusterrole', 'ns-reader', '--verb=get', '--resource=namespaces');
      await kubectl(
        'create',
        'clusterrolebinding',
        'robot-ns',
        '--clusterrole=ns-reader',
        '--serviceaccount=gen:robot',
      );
      assert.match(
        await kubectl('--token', token, 'get', 'namespace', 'gen', '-o', 'name'),
        /namespace\/gen/,
      );
      await kubectl('delete', 'serviceaccount', 'robot', '-n', 'gen');
      const refused = await env.start(['--token', token, 'get', 'namespace', 'gen']).done;
      assert.notEqual(refused.code, 0, 'the token dies with its service account');
      assert.match(refused.stderr, /Unauthorized/);
    });

    it('drains a node: the pod is evicted with a protobuf Eviction', async () => {
      await env.kubectlIn(
        `apiVersion: v1
kind: Node
metadata: {name: worker-1}
---
apiVersion: v1
kind: Pod
metadata: {name: lone, namespace: gen}
spec:
  nodeName: worker-1
  containers: [{name: c, image: nginx}]
`,
        'apply',
        '-f',
        '-',
      );
      const r = await env.start([
        'drain',
        'worker-1',
        '--force',
        '--ignore-daemonsets',
        '--timeout=20s',
        '-v=6',
      ]).done;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /node\/worker-1 drained/);
      assert.match(
        r.stderr,
        /POST \S+\/namespaces\/gen\/pods\/lone\/eviction\S* 201/,
        'drain evicts through the eviction subresource',
      );
      assert.equal((await json('node', 'worker-1')).spec.unschedulable, true);
      const gone = await env.start(['get', 'pod', 'lone', '-n', 'gen']).done;
      assert.match(gone.stderr, /NotFound/);
    });
  },
);

/** kubectl 1.33 sends the same protobuf bodies; the dispatcher picks 1.32 for our v1.32.4. */
const KUBECTL_1_33 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

describe(
  'kubectl 1.33 generator commands',
  { skip: kubectlMissing() ?? (existsSync(KUBECTL_1_33) ? undefined : `no ${KUBECTL_1_33}`) },
  () => {
    let env: KubectlEnv;
    before(async () => {
      env = await startKubectlEnv(KUBECTL_1_33);
    });
    after(async () => env.close());

    it('creates objects from protobuf bodies as 1.32 does', async () => {
      await env.kubectl('create', 'namespace', 'v133');
      await env.kubectl('create', 'secret', 'generic', 's', '-n', 'v133', '--from-literal=a=b');
      assert.equal(await env.kubectl('get', 'secret', 's', '-n', 'v133', '-o', 'jsonpath={.data.a}'), 'Yg==');
      await env.kubectl('create', 'deployment', 'web', '-n', 'v133', '--image=nginx', '--replicas=2');
      assert.equal(
        await env.kubectl('get', 'deployment', 'web', '-n', 'v133', '-o', 'jsonpath={.spec.replicas}'),
        '2',
      );
      await env.kubectl('create', 'service', 'nodeport', 'np', '-n', 'v133', '--tcp=80:8080');
      assert.match(
        await env.kubectl('get', 'service', 'np', '-n', 'v133', '-o', 'jsonpath={.spec.ports[0].nodePort}'),
        /^3\d{4}$/,
      );
      await env.kubectl('create', 'serviceaccount', 'robot', '-n', 'v133');
      const token = (await env.kubectl('create', 'token', 'robot', '-n', 'v133')).trim();
      await env.kubectl('create', 'clusterrole', 'ns-reader', '--verb=get', '--resource=namespaces');
      await env.kubectl(
        'create',
        'rolebinding',
        'robot-ns',
        '-n',
        'v133',
        '--clusterrole=ns-reader',
        '--serviceaccount=v133:robot',
      );
      assert.match(
        await env.kubectl('--token', token, 'get', 'namespace', 'v133', '-o', 'name'),
        /namespace\/v133/,
      );
    });
  },
);
