'use strict';
// The emulator checked with what we did not write: the official ECS client (@alicloud/ecs20140526, over
// @alicloud/openapi-client) and the official MNS client (@alicloud/mns) sign requests that the emulator must accept,
// and parse the emulator's answers into their response models; a wrong secret must be refused. Run with node's test
// runner:
//   NODE_PATH=<npm cache>/node_modules node --test test_emulator_sdk.js   (ALIBABA_SHARED_DATA names the data)
const test = require('node:test');
const assert = require('node:assert');
const { spawn } = require('node:child_process');
const path = require('node:path');
const http = require('node:http');
const Ecs = require('@alicloud/ecs20140526');
const { Config } = require('@alicloud/openapi-client');
const { RuntimeOptions } = require('@alicloud/tea-util');
const Mns = require('@alicloud/mns');

const KEY = 'LTAIemulatorKey0001';
const SECRET = 'emulator/Secret+Key=0001';
let emulator;
let port;

function control(method, p, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

function client(secret) {
  return new Ecs.default(new Config({ accessKeyId: KEY, accessKeySecret: secret || SECRET, regionId: 'cn-hangzhou',
    endpoint: `127.0.0.1:${port}`, protocol: 'HTTP' }));
}

const runtime = new RuntimeOptions({ autoretry: false, maxAttempts: 1 });

test.before(async () => {
  const data = process.env.ALIBABA_SHARED_DATA || path.join(__dirname, '..', '..', '..', '..', 'shared', 'data');
  emulator = spawn(process.execPath, [path.join(__dirname, 'alibaba_emulator.js'), '--data-dir', data,
    '--access-key', KEY, '--secret-key', SECRET], { stdio: ['ignore', 'pipe', 'inherit'] });
  port = await new Promise((resolve, reject) => {
    emulator.stdout.once('data', (d) => {
      const m = /^PORT (\d+)/.exec(d.toString());
      if (m) resolve(parseInt(m[1], 10)); else reject(new Error(`no port: ${d}`));
    });
  });
});

test.after(() => emulator.kill());

test('DescribeInstanceTypes pages parse into the SDK model', async () => {
  const c = client();
  let token;
  let n = 0;
  do {
    const r = await c.describeInstanceTypesWithOptions(new Ecs.DescribeInstanceTypesRequest({ maxResults: 100, nextToken: token }), runtime);
    for (const t of r.body.instanceTypes.instanceType) {
      assert.match(t.instanceTypeId, /^ecs\./);
      assert.ok(t.cpuCoreCount > 0 && t.memorySize > 0);
      assert.ok(['X86', 'ARM'].includes(t.cpuArchitecture));
      n += 1;
    }
    token = r.body.nextToken;
  } while (token);
  assert.ok(n > 100, `only ${n} types`);
});

test('DescribeAvailableResource, DescribePrice and DescribeSpotPriceHistory parse', async () => {
  const c = client();
  const a = await c.describeAvailableResourceWithOptions(new Ecs.DescribeAvailableResourceRequest({ regionId: 'cn-hangzhou',
    destinationResource: 'InstanceType', instanceChargeType: 'PostPaid', spotStrategy: 'SpotAsPriceGo' }), runtime);
  const zone = a.body.availableZones.availableZone[0];
  assert.strictEqual(zone.zoneId, 'cn-hangzhou-h');
  const res = zone.availableResources.availableResource[0].supportedResources.supportedResource;
  assert.ok(res.length > 50 && res.every((r) => r.status === 'Available'));
  const p = await c.describePriceWithOptions(new Ecs.DescribePriceRequest({ regionId: 'cn-hangzhou', resourceType: 'instance',
    instanceType: 'ecs.g7.large', priceUnit: 'Hour' }), runtime);
  assert.ok(p.body.priceInfo.price.tradePrice > 0);
  const d = p.body.priceInfo.price.detailInfos.detailInfo.find((x) => x.resource === 'instanceType');
  assert.ok(d.tradePrice > 0 && d.tradePrice < p.body.priceInfo.price.tradePrice);
  const s = await c.describeSpotPriceHistoryWithOptions(new Ecs.DescribeSpotPriceHistoryRequest({ regionId: 'cn-hangzhou',
    instanceType: 'ecs.g7.large', networkType: 'vpc' }), runtime);
  const sp = s.body.spotPrices.spotPriceType;
  assert.ok(sp.length >= 2 && sp.every((x) => x.spotPrice > 0 && x.spotPrice < d.tradePrice && /Z$/.test(x.timestamp)));
});

test('CreateAutoProvisioningGroup (instant, ClientToken) launches once; DescribeInstances and DeleteInstance', async () => {
  const c = client();
  const req = new Ecs.CreateAutoProvisioningGroupRequest({
    regionId: 'cn-hangzhou', autoProvisioningGroupType: 'instant', totalTargetCapacity: '1', payAsYouGoTargetCapacity: '1',
    defaultTargetCapacityType: 'PayAsYouGo', payAsYouGoAllocationStrategy: 'lowest-price', clientToken: 'sdk-token-1',
    launchTemplateConfig: [
      new Ecs.CreateAutoProvisioningGroupRequestLaunchTemplateConfig({ instanceType: 'ecs.g7.xlarge', vSwitchId: 'vsw-demo0', weightedCapacity: 1 }),
      new Ecs.CreateAutoProvisioningGroupRequestLaunchTemplateConfig({ instanceType: 'ecs.c7.large', vSwitchId: 'vsw-demo1', weightedCapacity: 1 }),
    ],
    launchConfiguration: new Ecs.CreateAutoProvisioningGroupRequestLaunchConfiguration({
      imageId: 'aliyun_3_x64_20G_alibase_20250117.vhd', securityGroupIds: ['sg-demo'],
      userData: Buffer.from('#!/bin/bash\necho hi\n').toString('base64'),
      tag: [new Ecs.CreateAutoProvisioningGroupRequestLaunchConfigurationTag({ key: 'karpenter.sh/nodepool', value: 'sdk' })],
    }),
  });
  const r1 = await c.createAutoProvisioningGroupWithOptions(req, runtime);
  const r2 = await c.createAutoProvisioningGroupWithOptions(req, runtime);
  const launched = r1.body.launchResults.launchResult.find((x) => x.instanceIds && x.instanceIds.instanceId.length);
  assert.strictEqual(launched.instanceType, 'ecs.c7.large'); // the cheaper choice
  assert.strictEqual(launched.zoneId, 'cn-hangzhou-i');
  const id = launched.instanceIds.instanceId[0];
  assert.strictEqual(r2.body.launchResults.launchResult.find((x) => x.instanceIds.instanceId.length).instanceIds.instanceId[0], id);
  const d = await c.describeInstancesWithOptions(new Ecs.DescribeInstancesRequest({ regionId: 'cn-hangzhou',
    tag: [new Ecs.DescribeInstancesRequestTag({ key: 'karpenter.sh/nodepool', value: 'sdk' })] }), runtime);
  const inst = d.body.instances.instance;
  assert.strictEqual(inst.length, 1);
  assert.strictEqual(inst[0].instanceId, id);
  assert.strictEqual(inst[0].vpcAttributes.vSwitchId, 'vsw-demo1');
  assert.deepStrictEqual(inst[0].securityGroupIds.securityGroupId, ['sg-demo']);
  assert.strictEqual(inst[0].tags.tag[0].tagValue, 'sdk');
  await c.deleteInstanceWithOptions(new Ecs.DeleteInstanceRequest({ instanceId: id, force: true }), runtime);
  await assert.rejects(c.deleteInstanceWithOptions(new Ecs.DeleteInstanceRequest({ instanceId: id, force: true }), runtime),
    (e) => e.code === 'InvalidInstanceId.NotFound');
  await assert.rejects(c.createAutoProvisioningGroupWithOptions(new Ecs.CreateAutoProvisioningGroupRequest({ ...req,
    launchTemplateConfig: req.launchTemplateConfig.slice(0, 1) }), runtime), (e) => e.code === 'IdempotentParameterMismatch');
});

test('a wrong secret is refused with SignatureDoesNotMatch; the SDK saw no other signature failure', async () => {
  await assert.rejects(client('not-the-secret').describeRegionsWithOptions(new Ecs.DescribeRegionsRequest({}), runtime),
    (e) => e.code === 'SignatureDoesNotMatch');
  const st = await control('GET', '/_emulator/state');
  assert.strictEqual(st.signature_failures, 1);
});

test('injected throttling reaches the SDK as Throttling.User', async () => {
  await control('POST', '/_emulator/faults', { kind: 'throttle', count: 1, actions: ['DescribeRegions'] });
  await assert.rejects(client().describeRegionsWithOptions(new Ecs.DescribeRegionsRequest({}), runtime),
    (e) => e.code === 'Throttling.User');
  const r = await client().describeRegionsWithOptions(new Ecs.DescribeRegionsRequest({}), runtime);
  assert.strictEqual(r.body.regions.region[0].regionId, 'cn-hangzhou');
});

function mnsClient(secret) {
  return new Mns('1234567890', { accessKeyId: KEY, accessKeySecret: secret || SECRET, endpoint: `http://127.0.0.1:${port}` });
}

test('the MNS client receives a queued system event, deletes it, and its wrong secret is refused', async () => {
  await control('POST', '/_emulator/events', { kind: 'preemptible-interruption', instance_id: 'i-bp1sdk' });
  const r = await mnsClient().batchReceiveMessage('nodesmith-events', 16, 1);
  assert.strictEqual(r.code, 200);
  assert.strictEqual(r.body.length, 1);
  const msg = r.body[0];
  const event = JSON.parse(msg.MessageBody);
  assert.strictEqual(event.name, 'Instance:PreemptibleInstanceInterruption');
  assert.strictEqual(event.content.instanceId, 'i-bp1sdk');
  assert.strictEqual(msg.MessageBodyMD5, require('node:crypto').createHash('md5').update(msg.MessageBody).digest('hex').toUpperCase());
  const d = await mnsClient().deleteMessage('nodesmith-events', msg.ReceiptHandle);
  assert.strictEqual(d.code, 204);
  await assert.rejects(mnsClient().deleteMessage('nodesmith-events', msg.ReceiptHandle), (e) => e.name.startsWith('MNSReceiptHandleError'));
  await assert.rejects(mnsClient().batchReceiveMessage('nodesmith-events', 16, 1), (e) => e.name.startsWith('MNSMessageNotExist'));
  const before = (await control('GET', '/_emulator/state')).signature_failures;
  await assert.rejects(mnsClient('not-the-secret').batchReceiveMessage('nodesmith-events', 16), (e) => e.name.startsWith('MNSSignatureDoesNotMatch'));
  assert.strictEqual((await control('GET', '/_emulator/state')).signature_failures, before + 1);
});
