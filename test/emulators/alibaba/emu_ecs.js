'use strict';
// ECS 2014-05-26 (RPC): the actions the provider calls, answering in the API's JSON shapes.
const crypto = require('crypto');

class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status || 400;
  }
}

function need(q, name) {
  if (q[name] === undefined || q[name] === '') throw new ApiError(`MissingParameter`, `The input parameter "${name}" that is mandatory for processing this request is not supplied.`);
  return q[name];
}

// "Name.1.Key" style lists: list(q, 'Tag', ['Key', 'Value']) -> [{Key, Value}, ...]
function list(q, prefix, fields) {
  const out = [];
  for (let i = 1; ; i++) {
    if (!fields) {
      if (q[`${prefix}.${i}`] === undefined) return out;
      out.push(q[`${prefix}.${i}`]);
      continue;
    }
    const item = {};
    let any = false;
    for (const f of fields) {
      if (q[`${prefix}.${i}.${f}`] !== undefined) {
        item[f] = q[`${prefix}.${i}.${f}`];
        any = true;
      }
    }
    if (!any) return out;
    out.push(item);
  }
}

function tagsMatch(tags, filters) {
  return filters.every((f) => f.Key in tags && (f.Value === undefined || tags[f.Key] === f.Value));
}

function page(items, q, wrap, inner) {
  const max = Math.min(parseInt(q.MaxResults || '10', 10) || 10, 100);
  const start = q.NextToken ? parseInt(Buffer.from(q.NextToken, 'base64').toString(), 10) : 0;
  const slice = items.slice(start, start + max);
  const next = start + max < items.length ? Buffer.from(String(start + max)).toString('base64') : '';
  return { [wrap]: { [inner]: slice }, NextToken: next, TotalCount: items.length };
}

function describeInstanceTypes(st, q) {
  const max = parseInt(q.MaxResults || '100', 10);
  if (max > 100) throw new ApiError('InvalidParameter.MaxResults', 'MaxResults must be 1 to 100.');
  const items = st.types.map(({ price, ...t }) => t);
  return page(items, { ...q, MaxResults: String(max) }, 'InstanceTypes', 'InstanceType');
}

function describeAvailableResource(st, q) {
  if (need(q, 'DestinationResource') !== 'InstanceType') throw new ApiError('InvalidParameter', 'Only DestinationResource InstanceType is emulated.');
  const spot = q.SpotStrategy && q.SpotStrategy !== 'NoSpot';
  const zones = st.zones.map((z) => ({
    ZoneId: z, RegionId: st.region, Status: 'Available', StatusCategory: 'WithStock',
    AvailableResources: { AvailableResource: [{ Type: 'InstanceType', SupportedResources: { SupportedResource:
      st.types.filter((t) => st.sells(t.InstanceTypeId, z, spot)).map((t) => ({ Value: t.InstanceTypeId,
        Status: st.nostock.has(`${t.InstanceTypeId}|${z}|${spot ? 'spot' : 'on-demand'}`) ? 'SoldOut' : 'Available',
        StatusCategory: 'WithStock' })) } }] },
  }));
  return { AvailableZones: { AvailableZone: zones } };
}

function describePrice(st, q) {
  if (need(q, 'ResourceType') !== 'instance') throw new ApiError('InvalidParameter', 'Only ResourceType instance is emulated.');
  const t = st.typeByName.get(need(q, 'InstanceType'));
  if (!t) throw new ApiError('InvalidInstanceType.ValueNotSupported', `The specified InstanceType ${q.InstanceType} does not exist.`);
  const disk = 0.0417;
  return { PriceInfo: { Price: { Currency: 'CNY', OriginalPrice: t.price + disk, DiscountPrice: 0, TradePrice: t.price + disk,
    DetailInfos: { DetailInfo: [{ Resource: 'instanceType', OriginalPrice: t.price, DiscountPrice: 0, TradePrice: t.price },
      { Resource: 'systemDisk', OriginalPrice: disk, DiscountPrice: 0, TradePrice: disk }] } },
  Rules: { Rule: [] } } };
}

function describeSpotPriceHistory(st, q) {
  const type = need(q, 'InstanceType');
  need(q, 'NetworkType');
  if (!st.typeByName.has(type)) throw new ApiError('InvalidInstanceType.ValueNotSupported', `The specified InstanceType ${type} does not exist.`);
  const t = st.typeByName.get(type);
  const prices = st.zones.filter((z) => (!q.ZoneId || q.ZoneId === z) && st.sells(type, z, true)).map((z) => ({
    ZoneId: z, InstanceType: type, IoOptimized: 'optimized', NetworkType: 'vpc', SpotPrice: st.spotPrice(type, z),
    OriginPrice: t.price, Timestamp: new Date(st.now() - 600000).toISOString().replace(/\.\d{3}Z$/, 'Z') }));
  return { SpotPrices: { SpotPriceType: prices }, Currency: 'CNY', NextOffset: 0 };
}

function describeSecurityGroups(st, q) {
  let groups = st.groups;
  if (q.SecurityGroupIds) {
    const ids = JSON.parse(q.SecurityGroupIds);
    groups = groups.filter((g) => ids.includes(g.SecurityGroupId));
  }
  if (q.SecurityGroupName) groups = groups.filter((g) => g.SecurityGroupName === q.SecurityGroupName);
  const filters = list(q, 'Tag', ['Key', 'Value']);
  groups = groups.filter((g) => tagsMatch(g.Tags, filters));
  const items = groups.map((g) => ({ SecurityGroupId: g.SecurityGroupId, SecurityGroupName: g.SecurityGroupName, VpcId: g.VpcId,
    Tags: { Tag: Object.entries(g.Tags).map(([TagKey, TagValue]) => ({ TagKey, TagValue })) } }));
  return page(items, q, 'SecurityGroups', 'SecurityGroup');
}

function describeImages(st, q) {
  let images = st.images.slice().sort((a, b) => b.created - a.created);
  if (q.ImageId) images = images.filter((i) => q.ImageId.split(',').includes(i.ImageId));
  if (q.ImageFamily) images = images.filter((i) => i.ImageFamily === q.ImageFamily);
  if (q.ImageOwnerAlias) images = images.filter((i) => i.ImageOwnerAlias === q.ImageOwnerAlias);
  const items = images.map((i) => ({ ImageId: i.ImageId, ImageName: i.ImageName || i.ImageId, Architecture: i.Architecture, ImageFamily: i.ImageFamily,
    ImageOwnerAlias: i.ImageOwnerAlias, Status: 'Available', OSType: 'linux' }));
  return { Images: { Image: items }, TotalCount: items.length, PageNumber: 1, PageSize: items.length };
}

function instanceView(st, inst) {
  // Pending at launch, Running from the next look on, as ECS's instances start
  if (inst.Status === 'Pending' && inst.seen) inst.Status = 'Running';
  inst.seen = true;
  return { InstanceId: inst.InstanceId, InstanceType: inst.InstanceType, ZoneId: inst.ZoneId, RegionId: st.region,
    Status: inst.Status, ImageId: inst.ImageId, SpotStrategy: inst.SpotStrategy, InstanceChargeType: 'PostPaid',
    CreationTime: inst.CreationTime, InstanceName: inst.InstanceId, VpcAttributes: { VpcId: 'vpc-demo', VSwitchId: inst.VSwitchId,
      PrivateIpAddress: { IpAddress: [inst.ip] } }, SecurityGroupIds: { SecurityGroupId: inst.SecurityGroupIds },
    Tags: { Tag: Object.entries(inst.Tags).map(([TagKey, TagValue]) => ({ TagKey, TagValue })) },
    OperationLocks: { LockReason: inst.locks.map((LockReason) => ({ LockReason })) } };
}

function describeInstances(st, q) {
  let insts = [...st.instances.values()];
  if (q.InstanceIds) {
    let ids;
    try { ids = JSON.parse(q.InstanceIds); } catch (e) { throw new ApiError('InvalidInstanceIds.Malformed', 'InstanceIds is not a JSON array.'); }
    insts = insts.filter((i) => ids.includes(i.InstanceId));
  }
  const filters = list(q, 'Tag', ['Key', 'Value']);
  insts = insts.filter((i) => tagsMatch(i.Tags, filters));
  if (q.LockReason) insts = insts.filter((i) => i.locks.includes(q.LockReason));
  const max = Math.min(parseInt(q.MaxResults || '10', 10), 100);
  const out = page(insts, { ...q, MaxResults: String(max) }, 'Instances', 'Instance');
  out.Instances.Instance = out.Instances.Instance.map((i) => instanceView(st, i));
  return out;
}

function deleteInstance(st, q) {
  const id = need(q, 'InstanceId');
  const inst = st.instances.get(id);
  if (!inst) throw new ApiError('InvalidInstanceId.NotFound', `The specified InstanceId ${id} does not exist.`, 404);
  if (inst.Status === 'Running' && q.Force !== 'true') throw new ApiError('IncorrectInstanceStatus', 'The instance is running; stop it or set Force.', 403);
  st.instances.delete(id);
  inst.Status = 'Deleted';
  inst.DeletedAt = new Date(st.now()).toISOString();
  return {};
}

function decodeUserData(b64) {
  if (!b64) return '';
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4) throw new ApiError('InvalidUserData.Base64FormatInvalid', 'The specified UserData is not valid Base64.');
  if (b64.length > 32768) throw new ApiError('InvalidUserData.SizeExceeded', 'The specified UserData is larger than 32 KB.');
  return Buffer.from(b64, 'base64').toString();
}

function launchInstance(st, choice, spot, cfg, token) {
  const id = st.id('i-bp1');
  const inst = { InstanceId: id, InstanceType: choice.InstanceType, ZoneId: choice.ZoneId, VSwitchId: choice.VSwitchId,
    ImageId: cfg.ImageId, SecurityGroupIds: cfg.SecurityGroupIds, Tags: cfg.Tags, UserData: cfg.UserData,
    SpotStrategy: spot ? 'SpotAsPriceGo' : 'NoSpot', Status: 'Pending', seen: false, locks: [],
    CreationTime: new Date(st.now()).toISOString().replace(/:\d{2}\.\d{3}Z$/, 'Z'), ClientToken: token,
    ip: `10.0.${st.zones.indexOf(choice.ZoneId)}.${(st.seq % 250) + 2}` };
  st.instances.set(id, inst);
  st.history.push(inst);
  return inst;
}

// The launch configuration shared by CreateAutoProvisioningGroup and RunInstances, checked against the account.
function readConfig(st, q, prefix) {
  const imageId = need(q, `${prefix}ImageId`);
  if (!st.images.some((i) => i.ImageId === imageId)) throw new ApiError('InvalidImageId.NotFound', `The specified ImageId ${imageId} does not exist.`, 404);
  const groups = list(q, `${prefix}SecurityGroupIds`);
  if (q[`${prefix}SecurityGroupId`]) groups.push(q[`${prefix}SecurityGroupId`]);
  if (!groups.length) throw new ApiError('MissingParameter', 'SecurityGroupId is mandatory.');
  for (const g of groups) if (!st.groups.some((x) => x.SecurityGroupId === g)) throw new ApiError('InvalidSecurityGroupId.NotFound', `The specified SecurityGroupId ${g} does not exist.`, 404);
  const tags = {};
  for (const t of list(q, `${prefix}Tag`, ['Key', 'Value'])) tags[t.Key] = t.Value || '';
  if (Object.keys(tags).length > 20) throw new ApiError('InvalidTagCount', 'At most 20 tags.');
  return { ImageId: imageId, SecurityGroupIds: groups, Tags: tags, UserData: decodeUserData(q[`${prefix}UserData`]) };
}

function withIdempotency(st, q, action, fn) {
  const token = q.ClientToken;
  if (!token) return fn(undefined);
  if (token.length > 64 || /[^\x20-\x7e]/.test(token)) throw new ApiError('InvalidClientToken.Malformed', 'ClientToken is ASCII of at most 64 characters.');
  const fingerprint = crypto.createHash('sha256').update(JSON.stringify(Object.entries(q).filter(([k]) => !['ClientToken', 'RegionId'].includes(k)).sort())).digest('hex');
  const prior = st.groupsByToken.get(`${action}|${token}`);
  if (prior) {
    if (prior.fingerprint !== fingerprint) throw new ApiError('IdempotentParameterMismatch', 'The request uses the same client token as a previous, but non-identical request.');
    return prior.answer;
  }
  const answer = fn(token);
  st.groupsByToken.set(`${action}|${token}`, { fingerprint, answer });
  return answer;
}

function createAutoProvisioningGroup(st, q) {
  if (need(q, 'AutoProvisioningGroupType') !== 'instant') throw new ApiError('InvalidParameter.AutoProvisioningGroupType', 'Only instant groups are emulated.');
  if (need(q, 'TotalTargetCapacity') !== '1') throw new ApiError('InvalidParameter.TotalTargetCapacity', 'Only a capacity of 1 is emulated.');
  const spot = q.DefaultTargetCapacityType === 'Spot' || q.SpotTargetCapacity === '1';
  for (const s of ['SpotAllocationStrategy', 'PayAsYouGoAllocationStrategy'])
    if (q[s] && !['lowest-price', 'diversified', 'capacity-optimized', 'prioritized'].includes(q[s])) throw new ApiError(`InvalidParameter.${s}`, `${s} ${q[s]} is not valid.`);
  const configs = list(q, 'LaunchTemplateConfig', ['InstanceType', 'VSwitchId', 'WeightedCapacity', 'Priority', 'MaxPrice']);
  if (!configs.length || configs.length > 20) throw new ApiError('InvalidParameter.LaunchTemplateConfig', 'LaunchTemplateConfig needs 1 to 20 entries.');
  return withIdempotency(st, q, 'CreateAutoProvisioningGroup', (token) => {
    const cfg = readConfig(st, q, 'LaunchConfiguration.');
    const choices = configs.map((c) => {
      const vsw = st.vswitches.find((v) => v.VSwitchId === c.VSwitchId);
      if (!vsw) throw new ApiError('InvalidVSwitchId.NotFound', `The specified VSwitchId ${c.VSwitchId} does not exist.`, 404);
      if (!st.typeByName.has(c.InstanceType)) throw new ApiError('InvalidInstanceType.ValueNotSupported', `The specified InstanceType ${c.InstanceType} does not exist.`);
      const price = spot ? st.spotPrice(c.InstanceType, vsw.ZoneId) : st.typeByName.get(c.InstanceType).price;
      return { ...c, ZoneId: vsw.ZoneId, price, priority: parseInt(c.Priority || '0', 10) };
    });
    const strategy = spot ? q.SpotAllocationStrategy : q.PayAsYouGoAllocationStrategy;
    choices.sort((a, b) => (strategy === 'prioritized' ? a.priority - b.priority : a.price - b.price));
    const results = [];
    let launched = null;
    let transient = st.transientNostock;
    for (const c of choices) {
      const ct = spot ? 'spot' : 'on-demand';
      if (transient && st.sells(c.InstanceType, c.ZoneId, spot)) {
        transient = false;
        results.push({ InstanceType: c.InstanceType, ZoneId: c.ZoneId, SpotStrategy: spot ? 'SpotAsPriceGo' : 'NoSpot', Amount: 0,
          ErrorCode: 'OperationDenied.NoStock', ErrorMsg: 'The resource is out of stock in the specified zone.', InstanceIds: { InstanceId: [] } });
        continue;
      }
      if (!st.sells(c.InstanceType, c.ZoneId, spot)) {
        results.push({ InstanceType: c.InstanceType, ZoneId: c.ZoneId, SpotStrategy: spot ? 'SpotAsPriceGo' : 'NoSpot', Amount: 0,
          ErrorCode: 'InvalidResourceType.NotSupported', ErrorMsg: `${c.InstanceType} is not sold in ${c.ZoneId}.`, InstanceIds: { InstanceId: [] } });
        continue;
      }
      if (st.nostock.has(`${c.InstanceType}|${c.ZoneId}|${ct}`)) {
        results.push({ InstanceType: c.InstanceType, ZoneId: c.ZoneId, SpotStrategy: spot ? 'SpotAsPriceGo' : 'NoSpot', Amount: 0,
          ErrorCode: 'OperationDenied.NoStock', ErrorMsg: 'The resource is out of stock in the specified zone.', InstanceIds: { InstanceId: [] } });
        continue;
      }
      launched = launchInstance(st, c, spot, cfg, token);
      results.push({ InstanceType: c.InstanceType, ZoneId: c.ZoneId, SpotStrategy: spot ? 'SpotAsPriceGo' : 'NoSpot', Amount: 1,
        InstanceIds: { InstanceId: [launched.InstanceId] } });
      break;
    }
    st.launches.push({ token, spot, choices: choices.map((c) => `${c.InstanceType}@${c.ZoneId}`), launched: launched && launched.InstanceId,
      params: q });
    if (st.launches.length > 200) st.launches.shift();
    return { AutoProvisioningGroupId: st.id('apg-'), LaunchResults: { LaunchResult: results } };
  });
}

function runInstances(st, q) {
  const type = need(q, 'InstanceType');
  const vsw = st.vswitches.find((v) => v.VSwitchId === need(q, 'VSwitchId'));
  if (!vsw) throw new ApiError('InvalidVSwitchId.NotFound', `The specified VSwitchId ${q.VSwitchId} does not exist.`, 404);
  const spot = q.SpotStrategy && q.SpotStrategy !== 'NoSpot';
  return withIdempotency(st, q, 'RunInstances', (token) => {
    const cfg = readConfig(st, q, '');
    if (!st.sells(type, vsw.ZoneId, spot) || st.nostock.has(`${type}|${vsw.ZoneId}|${spot ? 'spot' : 'on-demand'}`))
      throw new ApiError('OperationDenied.NoStock', 'The resource is out of stock in the specified zone.', 403);
    const inst = launchInstance(st, { InstanceType: type, ZoneId: vsw.ZoneId, VSwitchId: vsw.VSwitchId }, spot, cfg, token);
    return { InstanceIdSets: { InstanceIdSet: [inst.InstanceId] }, TradePrice: st.typeByName.get(type).price };
  });
}

function describeRegions(st) {
  return { Regions: { Region: [{ RegionId: st.region, LocalName: st.region, RegionEndpoint: `ecs.${st.region}.aliyuncs.com` }] } };
}

const ACTIONS = {
  DescribeInstanceTypes: describeInstanceTypes,
  DescribeAvailableResource: describeAvailableResource,
  DescribePrice: describePrice,
  DescribeSpotPriceHistory: describeSpotPriceHistory,
  DescribeSecurityGroups: describeSecurityGroups,
  DescribeImages: describeImages,
  DescribeInstances: describeInstances,
  DeleteInstance: deleteInstance,
  CreateAutoProvisioningGroup: createAutoProvisioningGroup,
  RunInstances: runInstances,
  DescribeRegions: describeRegions,
};

module.exports = { ACTIONS, ApiError, list, tagsMatch, need };
