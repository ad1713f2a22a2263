'use strict';
// VPC (RPC), ACK (ROA), STS AssumeRoleWithOIDC (unsigned), the instance metadata service and the MNS queue.
const crypto = require('crypto');
const { ApiError, list, tagsMatch, need } = require('./emu_ecs');

function describeVSwitches(st, q) {
  let v = st.vswitches;
  if (q.VSwitchId) v = v.filter((s) => q.VSwitchId.split(',').includes(s.VSwitchId));
  if (q.ZoneId) v = v.filter((s) => s.ZoneId === q.ZoneId);
  const filters = list(q, 'Tag', ['Key', 'Value']);
  v = v.filter((s) => tagsMatch(s.Tags, filters));
  const size = Math.min(parseInt(q.PageSize || '10', 10), 50);
  const number = parseInt(q.PageNumber || '1', 10);
  const items = v.slice((number - 1) * size, number * size).map((s) => ({ VSwitchId: s.VSwitchId, ZoneId: s.ZoneId, VpcId: s.VpcId,
    Status: s.Status, AvailableIpAddressCount: s.AvailableIpAddressCount, CidrBlock: s.CidrBlock,
    Tags: { Tag: Object.entries(s.Tags).map(([Key, Value]) => ({ Key, Value })) } }));
  return { VSwitches: { VSwitch: items }, TotalCount: v.length, PageNumber: number, PageSize: size };
}

const VPC = { DescribeVSwitches: describeVSwitches };

// ACK (CS 2015-12-15), ROA: the route and the action name it stands for.
function ackRoute(method, pathname) {
  let m;
  if (method === 'GET' && (m = /^\/clusters\/([^/]+)$/.exec(pathname))) return ['DescribeClusterDetail', m[1]];
  if (method === 'POST' && (m = /^\/clusters\/([^/]+)\/attachscript$/.exec(pathname))) return ['DescribeClusterAttachScripts', m[1]];
  if (method === 'GET' && pathname === '/api/v1/metadata/versions') return ['DescribeKubernetesVersionMetadata', null];
  return [null, null];
}

function ack(st, action, clusterId, q, body) {
  if (action === 'DescribeKubernetesVersionMetadata') {
    if (q.ClusterType !== 'ManagedKubernetes') throw new ApiError('ErrorQueryParams', 'ClusterType must be ManagedKubernetes.', 400);
    const version = q.KubernetesVersion || '1.31';
    return [{ version: `${version}.1-aliyun.1`, images: st.ackImages, runtimes: [{ name: 'containerd', version: '1.6.28' }] }];
  }
  const c = st.clusters.get(clusterId);
  if (!c) throw new ApiError('ErrorClusterNotFound', `cluster ${clusterId} not found`, 404);
  if (action === 'DescribeClusterDetail')
    return { cluster_id: clusterId, name: clusterId, cluster_type: 'ManagedKubernetes', region_id: st.region, state: 'running',
      current_version: c.version, meta_data: JSON.stringify({ Capabilities: { Network: c.cni }, KubernetesVersion: c.version }) };
  let opts = {};
  try { opts = body.length ? JSON.parse(body) : {}; } catch (e) { throw new ApiError('ErrorParams', 'The body is not JSON.', 400); }
  return `curl -fsSL http://aliacs-k8s-${st.region}.oss-${st.region}-internal.aliyuncs.com/public/pkg/run/attach/${c.version}/attach_node.sh | bash -s -- --openapi-token emulator-attach-token --ess true --auto-provision true --runtime containerd --runtime-version 1.6.28${opts.format_disk ? ' --format-disk' : ''}`;
}

// STS AssumeRoleWithOIDC: unsigned, parameters in the query and the form body.
function assumeRoleWithOidc(st, q) {
  for (const f of ['RoleArn', 'OIDCProviderArn', 'OIDCToken']) need(q, f);
  if (q.RoleArn !== st.roleArn) throw new ApiError('EntityNotExist.Role', `The role ${q.RoleArn} does not exist.`, 404);
  if (q.OIDCProviderArn !== st.oidcProviderArn) throw new ApiError('EntityNotExist.OIDCProvider', 'The OIDC provider does not exist.', 404);
  if (!st.oidcTokens.has(q.OIDCToken)) throw new ApiError('AuthenticationFail.OIDCToken.Invalid', 'The OIDC token is invalid.', 400);
  const d = parseInt(q.DurationSeconds || '3600', 10);
  if (d < 900 || d > 43200) throw new ApiError('InvalidParameter.DurationSeconds', 'DurationSeconds is 900 to 43200.');
  return { Credentials: st.issueKey('STS.'), AssumedRoleUser: { Arn: `${q.RoleArn}/${q.RoleSessionName || 'session'}`, AssumedRoleId: '1:session' },
    OIDCTokenInfo: { Issuer: 'https://oidc-ack.example', Subject: 'system:serviceaccount:karpenter:karpenter' } };
}

// The metadata service: IMDSv2-style session tokens (a PUT), required when st.imdsTokenRequired.
function metadata(st, req, pathname) {
  if (req.method === 'PUT' && pathname === '/latest/api/token') {
    const ttl = parseInt(req.headers['x-aliyun-ecs-metadata-token-ttl-seconds'] || '0', 10);
    if (!(ttl >= 1 && ttl <= 21600)) return [400, 'text/plain', 'invalid ttl'];
    const token = crypto.randomBytes(16).toString('hex');
    st.imdsTokens = st.imdsTokens || new Set();
    st.imdsTokens.add(token);
    return [200, 'text/plain', token];
  }
  if (req.method !== 'GET' || !pathname.startsWith('/latest/meta-data/')) return [404, 'text/plain', 'not found'];
  const token = req.headers['x-aliyun-ecs-metadata-token'];
  if (token && !(st.imdsTokens && st.imdsTokens.has(token))) return [401, 'text/plain', 'invalid token'];
  if (!token && st.imdsTokenRequired) return [403, 'text/plain', 'token required'];
  st.count('Metadata');
  const item = pathname.slice('/latest/meta-data/'.length);
  if (item === 'region-id') return [200, 'text/plain', st.region];
  if (item === 'zone-id') return [200, 'text/plain', st.zones[0]];
  if (item === 'instance-id') return [200, 'text/plain', 'i-controller'];
  if (item === 'ram/security-credentials/') return [200, 'text/plain', st.ramRole];
  if (item === `ram/security-credentials/${st.ramRole}`) {
    const c = st.issueKey('STS.');
    return [200, 'application/json', JSON.stringify({ ...c, Code: 'Success', LastUpdated: new Date(st.now()).toISOString() })];
  }
  return [404, 'text/plain', 'not found'];
}

function xmlEscape(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function mnsError(code, message, status) {
  return [status, 'text/xml', `<?xml version="1.0" encoding="UTF-8"?>\n<Error xmlns="http://mns.aliyuncs.com/doc/v1/"><Code>${code}</Code><Message>${xmlEscape(message)}</Message><RequestId>${crypto.randomBytes(8).toString('hex')}</RequestId><HostId>mns.emulator</HostId></Error>`];
}

// MNS: batch ReceiveMessage (with a short long-poll) and DeleteMessage on the one queue. Received messages stay
// invisible for 30 s unless deleted.
async function mns(st, req, pathname, q) {
  const m = /^\/queues\/([^/]+)\/messages$/.exec(pathname);
  if (!m) return mnsError('InvalidArgument', 'unknown resource', 400);
  if (m[1] !== st.queueName) return mnsError('QueueNotExist', `The queue ${m[1]} does not exist.`, 404);
  if (req.method === 'DELETE') {
    const i = st.queue.findIndex((x) => x.receipt && x.receipt === q.ReceiptHandle);
    if (i < 0) return mnsError('ReceiptHandleError', 'The receipt handle is not valid.', 404);
    st.queue.splice(i, 1);
    return [204, 'text/xml', ''];
  }
  const n = Math.min(parseInt(q.numOfMessages || '1', 10), 16);
  const until = Date.now() + Math.min(parseInt(q.waitseconds || '0', 10), 30) * 1000;
  for (;;) {
    const visible = st.queue.filter((x) => x.visibleAt <= st.now()).slice(0, n);
    if (visible.length || Date.now() >= until) {
      if (!visible.length) return mnsError('MessageNotExist', 'Message not exist.', 404);
      const parts = visible.map((x) => {
        x.receipt = crypto.randomBytes(12).toString('hex');
        x.visibleAt = st.now() + 30000;
        x.dequeues = (x.dequeues || 0) + 1;
        const md5 = crypto.createHash('md5').update(x.body).digest('hex').toUpperCase();
        return `<Message><MessageId>${x.id}</MessageId><ReceiptHandle>${x.receipt}</ReceiptHandle><MessageBodyMD5>${md5}</MessageBodyMD5><MessageBody>${xmlEscape(x.body)}</MessageBody><EnqueueTime>${x.enqueued}</EnqueueTime><NextVisibleTime>${x.visibleAt}</NextVisibleTime><FirstDequeueTime>${x.enqueued}</FirstDequeueTime><DequeueCount>${x.dequeues}</DequeueCount><Priority>8</Priority></Message>`;
      });
      return [200, 'text/xml', `<?xml version="1.0" encoding="UTF-8"?>\n<Messages xmlns="http://mns.aliyuncs.com/doc/v1/">${parts.join('')}</Messages>`];
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The body of a queued system event, in CloudMonitor's shape (EventBridge's for state changes, base64 for one kind,
// as subscriptions may encode bodies).
function eventBody(st, kind, instanceId, deadlineMs) {
  const now = new Date(st.now());
  const cm = (name, content, level) => JSON.stringify({ ver: '1.0', id: crypto.randomUUID(), product: 'ECS', resourceId: `acs:ecs:${st.region}:1234567890:instance/${instanceId}`,
    level, name, userId: '1234567890', eventTime: now.toISOString().replace(/[-:]/g, '').replace(/\.(\d{3})Z$/, '.$1+0000'), regionId: st.region, content });
  switch (kind) {
    case 'preemptible-interruption': return cm('Instance:PreemptibleInstanceInterruption', { instanceId, action: 'delete' }, 'WARN');
    case 'maintenance-inquiring':
      return Buffer.from(cm('Instance:SystemMaintenance.Reboot:Inquiring', { instanceId, eventType: 'SystemMaintenance.Reboot', eventStatus: 'Inquiring',
        publishTime: now.toISOString() }, 'CRITICAL')).toString('base64');
    case 'maintenance-scheduled':
      return cm('Instance:SystemMaintenance.Reboot:Scheduled', { instanceId, eventType: 'SystemMaintenance.Reboot', eventStatus: 'Scheduled',
        publishTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'), notBefore: new Date(deadlineMs || st.now() + 86400000).toISOString().replace(/\.\d{3}Z$/, 'Z') }, 'CRITICAL');
    case 'stopping': return cm('Instance:StateChange', { resourceId: instanceId, resourceType: 'ALIYUN::ECS::Instance', instanceId, state: 'Stopping' }, 'INFO');
    case 'deleted':
      return JSON.stringify({ id: crypto.randomUUID(), source: 'acs.ecs', specversion: '1.0', type: 'ecs:Instance:StateChange', time: now.toISOString(),
        aliyunregionid: st.region, data: { resourceId: `acs:ecs:${st.region}:1234567890:instance/${instanceId}`, instanceId, state: 'Deleted' } });
    default: return null;
  }
}

module.exports = { VPC, ackRoute, ack, assumeRoleWithOidc, metadata, mns, mnsError, eventBody };
