'use strict';
// The emulated account: instance types and on-demand prices read from the shared data directory (types that have a
// price in the region), three zones, vSwitches, security groups, images, the ACK cluster, instances, the MNS queue,
// faults and counters.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const GPU_SPECS = { 'ecs.gn5i': 'NVIDIA P4', 'ecs.gn6e': 'NVIDIA V100', 'ecs.gn6i': 'NVIDIA T4', 'ecs.gn7i': 'NVIDIA A10' };

function hash(s) {
  return crypto.createHash('sha256').update(s).digest().readUInt32BE(0);
}

function loadTypes(dataDir, region) {
  const types = JSON.parse(fs.readFileSync(path.join(dataDir, 'alibaba-instance-types.json')));
  const prices = JSON.parse(fs.readFileSync(path.join(dataDir, 'alibaba-prices-ondemand.json')))[region] || {};
  const out = [];
  for (const t of types) {
    if (!(t.name in prices) || !t.regions.includes(region) || t.vcpu <= 0) continue;
    const eni = Math.min(2 + Math.floor(t.vcpu / 2), 15);
    out.push({
      InstanceTypeId: t.name,
      InstanceTypeFamily: t.family,
      CpuCoreCount: t.vcpu,
      MemorySize: t.memory_gib,
      CpuArchitecture: t.arch === 'arm64' ? 'ARM' : 'X86',
      PhysicalProcessorModel: t.arch === 'arm64' ? 'Yitian 710' : (/\.(c|g|r)8a/.test(t.name) ? 'AMD EPYC Genoa' : 'Intel Xeon Platinum'),
      GPUAmount: t.gpu_count || 0,
      GPUSpec: t.gpu_count ? (GPU_SPECS[t.family] || 'NVIDIA A10') : '',
      GPUMemorySize: t.gpu_count ? 16 : 0,
      EniQuantity: eni,
      EniPrivateIpAddressQuantity: Math.min(6 + t.vcpu, 20),
      InstanceCategory: 'General-purpose',
      price: prices[t.name],
    });
  }
  out.sort((a, b) => (a.InstanceTypeId < b.InstanceTypeId ? -1 : 1));
  return out;
}

class State {
  constructor(dataDir, region, accessKey, secret) {
    this.region = region;
    this.zones = [`${region}-h`, `${region}-i`, `${region}-j`];
    this.types = loadTypes(dataDir, region);
    this.typeByName = new Map(this.types.map((t) => [t.InstanceTypeId, t]));
    this.clockOffsetMs = 0;
    this.keys = new Map([[accessKey, { secret, token: null, expires: 0 }]]);
    this.nonces = new Set();
    this.credentialLifetimeS = 3600;
    this.oidcTokens = new Set(['emulator-oidc-token']);
    this.roleArn = 'acs:ram::1234567890:role/karpenter';
    this.oidcProviderArn = 'acs:ram::1234567890:oidc-provider/ack-rrsa-c-demo';
    this.ramRole = 'KarpenterNodeRole';
    this.clusters = new Map([['c-demo', { cni: 'terway-eniip', version: '1.31.1-aliyun.1' }]]);
    this.vswitches = this.zones.map((z, i) => ({ VSwitchId: `vsw-demo${i}`, ZoneId: z, VpcId: 'vpc-demo', Status: 'Available',
      AvailableIpAddressCount: 200 + 50 * i, CidrBlock: `10.0.${i}.0/24`, Tags: { 'karpenter.sh/discovery': 'demo' } }));
    this.vswitches.push({ VSwitchId: 'vsw-other', ZoneId: this.zones[0], VpcId: 'vpc-demo', Status: 'Available',
      AvailableIpAddressCount: 10, CidrBlock: '10.0.9.0/24', Tags: { 'karpenter.sh/discovery': 'other' } });
    this.groups = [
      { SecurityGroupId: 'sg-demo', SecurityGroupName: 'demo-nodes', VpcId: 'vpc-demo', Tags: { 'karpenter.sh/discovery': 'demo' } },
      { SecurityGroupId: 'sg-other', SecurityGroupName: 'other-nodes', VpcId: 'vpc-demo', Tags: { 'karpenter.sh/discovery': 'other' } },
    ];
    this.images = [
      { ImageId: 'aliyun_3_x64_20G_alibase_20250117.vhd', ImageName: 'Alibaba Cloud Linux 3.2104 LTS 64 bit', Architecture: 'x86_64', ImageFamily: 'acs:alibaba_cloud_linux_3_2104_lts_x64', ImageOwnerAlias: 'system', created: 2 },
      { ImageId: 'aliyun_3_arm64_20G_alibase_20250117.vhd', ImageName: 'Alibaba Cloud Linux 3.2104 LTS 64 bit ARM', Architecture: 'arm64', ImageFamily: 'acs:alibaba_cloud_linux_3_2104_lts_arm64', ImageOwnerAlias: 'system', created: 2 },
      { ImageId: 'aliyun_3_x64_20G_alibase_20240819.vhd', ImageName: 'Alibaba Cloud Linux 3.2104 LTS 64 bit (20240819)', Architecture: 'x86_64', ImageFamily: 'acs:alibaba_cloud_linux_3_2104_lts_x64', ImageOwnerAlias: 'system', created: 1 },
      { ImageId: 'm-golden123', ImageName: 'golden', Architecture: 'x86_64', ImageFamily: '', ImageOwnerAlias: 'self', created: 3 },
    ];
    this.ackImages = [
      { image_id: 'aliyun_3_x64_20G_alibase_20250117.vhd', image_name: 'Alibaba Cloud Linux 3.2104 LTS 64 bit', image_type: 'AliyunLinux3', architecture: 'x86_64', platform: 'AliyunLinux', os_version: '3' },
      { image_id: 'aliyun_3_arm64_20G_alibase_20250117.vhd', image_name: 'Alibaba Cloud Linux 3.2104 LTS 64 bit ARM', image_type: 'AliyunLinux3Arm64', architecture: 'arm64', platform: 'AliyunLinux', os_version: '3' },
      { image_id: 'lifsea_3_x64_10G_containerd_1_6_28_alibase_20250101.vhd', image_name: 'ContainerOS 3.3', image_type: 'ContainerOS', architecture: 'x86_64', platform: 'ContainerOS', os_version: '3' },
    ];
    this.instances = new Map();
    // every instance ever launched, deleted ones included (DeletedAt set): the tests' record of what was launched
    this.history = [];
    this.groupsByToken = new Map();
    this.seq = 0;
    this.queue = []; // {id, body, receipt, visibleAt, enqueued}
    this.queueName = 'nodesmith-events';
    this.faults = [];
    this.nostock = new Set();
    this.counts = {};
    this.faultsInjected = {};
    this.faultsByAction = {};
    this.signatureFailures = 0;
    this.launches = [];
  }

  now() {
    return Date.now() + this.clockOffsetMs;
  }

  id(prefix) {
    this.seq += 1;
    return `${prefix}${crypto.randomBytes(6).toString('hex')}${this.seq.toString(36)}`;
  }

  // Whether the type is sold in the zone, pay-as-you-go or spot: the first two zones sell everything, the third two
  // types in three; spot is sold wherever pay-as-you-go is, but for one type in eight.
  sells(type, zone, spot) {
    const zi = this.zones.indexOf(zone);
    if (zi < 0 || !this.typeByName.has(type)) return false;
    if (zi === 2 && hash(type) % 3 === 0) return false;
    if (spot && hash(type + 'spot') % 8 === 0) return false;
    return true;
  }

  spotPrice(type, zone) {
    const t = this.typeByName.get(type);
    return Math.round(t.price * (0.2 + (hash(type + zone) % 20) / 100) * 10000) / 10000;
  }

  issueKey(prefix) {
    const ak = `${prefix}${crypto.randomBytes(8).toString('hex')}`;
    const k = { secret: crypto.randomBytes(18).toString('base64'), token: `token-${crypto.randomBytes(24).toString('hex')}`,
      expires: this.now() + this.credentialLifetimeS * 1000 };
    this.keys.set(ak, k);
    return { AccessKeyId: ak, AccessKeySecret: k.secret, SecurityToken: k.token,
      Expiration: new Date(k.expires).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  count(action) {
    this.counts[action] = (this.counts[action] || 0) + 1;
  }
}

module.exports = { State };
