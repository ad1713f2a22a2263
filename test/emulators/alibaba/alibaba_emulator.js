#!/usr/bin/env node
'use strict';
// An emulator of the Alibaba Cloud APIs nodesmith's alibaba.so calls (ECS, VPC, ACK, STS, the instance metadata
// service, an MNS queue of system events), on 127.0.0.1 only, for tests. Every signed request is verified with the
// official SDK's signing routines (emu_auth.js). See README.md.
//
//   node alibaba_emulator.js --data-dir ../shared/data [--region cn-hangzhou] [--port 0]
//                            [--access-key ID --secret-key SECRET]
// Prints "PORT <n>" first on stdout; exits when its parent process does.
const http = require('http');
const { URL } = require('url');
const { State } = require('./emu_state');
const { AuthError, verifyAcs3, verifyRpcV1, verifyMns } = require('./emu_auth');
const { ACTIONS: ECS, ApiError } = require('./emu_ecs');
const svc = require('./emu_services');

const PRODUCTS = { '2014-05-26': ['ecs', ECS], '2016-04-28': ['vpc', svc.VPC] };

function args() {
  const a = { dataDir: null, region: 'cn-hangzhou', port: 0, accessKey: 'LTAIemulatorKey0001', secretKey: 'emulator/Secret+Key=0001' };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const v = argv[i + 1];
    if (argv[i] === '--data-dir') a.dataDir = v;
    else if (argv[i] === '--region') a.region = v;
    else if (argv[i] === '--port') a.port = parseInt(v, 10);
    else if (argv[i] === '--access-key') a.accessKey = v;
    else if (argv[i] === '--secret-key') a.secretKey = v;
    else { process.stderr.write(`unknown argument ${argv[i]}\n`); process.exit(2); }
  }
  if (!a.dataDir) { process.stderr.write('--data-dir is required\n'); process.exit(2); }
  return a;
}

const opts = args();
const st = new State(opts.dataDir, opts.region, opts.accessKey, opts.secretKey);

// A seeded generator for random faults (mulberry32).
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function requestId() {
  return require('crypto').randomUUID().toUpperCase();
}

// The fault that applies to this action now, consumed; null when none.
function takeFault(action) {
  for (const f of st.faults) {
    if (f.actions && !f.actions.includes(action)) continue;
    if (f.kind === 'random') {
      if (f.random() >= f.rate) continue;
      const kinds = action === 'CreateAutoProvisioningGroup' ? f.kinds : f.kinds.filter((k) => k !== 'nostock');
      if (!kinds.length) continue;
      return { ...f, kind: kinds[Math.floor(f.random() * kinds.length)] };
    }
    if (f.count <= 0) continue;
    f.count -= 1;
    return f.kind === 'transient_nostock' ? { ...f, kind: 'nostock' } : f;
  }
  return null;
}

function recordFault(kind, action) {
  st.faultsInjected[kind] = (st.faultsInjected[kind] || 0) + 1;
  st.faultsByAction[action] = (st.faultsByAction[action] || 0) + 1;
}

function send(res, status, type, body, headers) {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...(headers || {}) });
  res.end(body);
}

// An error in the style of the product: RPC {Code, Message}, ROA {code, message}, MNS XML.
function errorAnswer(style, code, message, status) {
  const id = requestId();
  if (style === 'mns') return svc.mnsError(code, message, status);
  if (style === 'roa') return [status, 'application/json;charset=utf-8', JSON.stringify({ code, message, requestId: id, data: null })];
  return [status, 'application/json;charset=utf-8', JSON.stringify({ RequestId: id, HostId: 'emulator.aliyuncs.com', Code: code,
    Message: message, Recommend: `https://api.aliyun.com/troubleshoot?q=${code}` })];
}

function faultAnswer(f, style) {
  if (f.kind === 'throttle') return errorAnswer(style, style === 'mns' ? 'Throttling' : 'Throttling.User', 'Request was denied due to user flow control.', style === 'rpc' ? 400 : 429);
  if (f.kind === 'error5xx') return f.status === 500 || !f.status ? errorAnswer(style, 'InternalError', 'The request processing has failed due to some unknown error.', 500)
    : errorAnswer(style, 'ServiceUnavailable', 'The request has failed due to a temporary failure of the server.', f.status);
  if (f.kind === 'error') return errorAnswer(style, f.code, `injected ${f.code}`, f.status || 400);
  return null;
}

async function handleSigned(req, res, url, query, body) {
  let style = 'rpc', action, run;
  if (url.pathname.startsWith('/queues/')) {
    style = 'mns';
    action = req.method === 'DELETE' ? 'DeleteMessage' : 'ReceiveMessage';
    verifyMns(st, req, url.pathname + url.search);
    run = () => svc.mns(st, req, url.pathname, query);
  } else if (query.Signature) {
    verifyRpcV1(st, req.method, query);
    action = query.Action;
    const product = PRODUCTS[query.Version];
    if (!product || !product[1][action]) throw new ApiError('InvalidAction.NotFound', `Specified api ${action} is not found.`, 404);
    run = () => ok(product[1][action](st, query));
  } else {
    verifyAcs3(st, req, query, body);
    action = req.headers['x-acs-action'];
    const version = req.headers['x-acs-version'];
    if (url.pathname === '/') {
      const product = PRODUCTS[version];
      if (!product || !product[1][action]) throw new ApiError('InvalidAction.NotFound', `Specified api ${action} is not found.`, 404);
      run = () => ok(product[1][action](st, query));
    } else {
      style = 'roa';
      const [route, cluster] = svc.ackRoute(req.method, url.pathname);
      if (version !== '2015-12-15' || !route || route !== action) throw new ApiError('InvalidAction.NotFound', `No ACK route ${req.method} ${url.pathname} for ${action}.`, 404);
      run = () => [200, 'application/json;charset=utf-8', JSON.stringify(svc.ack(st, route, cluster, query, body))];
    }
  }
  return [style, action, run];
}

function ok(result) {
  return [200, 'application/json;charset=utf-8', JSON.stringify({ RequestId: requestId(), ...result })];
}

async function dispatch(req, res, body) {
  const url = new URL(req.url, 'http://127.0.0.1');
  const query = Object.fromEntries(url.searchParams.entries());
  req.pathname = url.pathname;
  if (url.pathname.startsWith('/_emulator/')) return control(req, res, url.pathname, body);
  if (url.pathname.startsWith('/latest/')) {
    const [status, type, text] = svc.metadata(st, req, url.pathname);
    return send(res, status, type, text);
  }
  let style = url.pathname.startsWith('/queues/') ? 'mns' : url.pathname === '/' ? 'rpc' : 'roa';
  let action = style === 'mns' ? (req.method === 'DELETE' ? 'DeleteMessage' : 'ReceiveMessage')
    : query.Action || req.headers['x-acs-action'] || 'unknown';
  try {
    let run;
    if (query.Action === 'AssumeRoleWithOIDC') {
      const form = Object.fromEntries(new URLSearchParams(body.toString()).entries());
      const q = { ...query, ...form };
      st.count(action);
      if (st.rejectOidc > 0) { st.rejectOidc -= 1; throw new ApiError('AuthenticationFail.OIDCToken.Invalid', 'injected rejection', 400); }
      run = () => ok(svc.assumeRoleWithOidc(st, q));
    } else {
      [style, action, run] = await handleSigned(req, res, url, query, body);
      st.count(action);
    }
    const f = takeFault(action);
    if (f) recordFault(f.kind, action);
    if (f && f.kind === 'slow') await new Promise((r) => setTimeout(r, f.delay_ms || 1000));
    // a transient shortage: the pool ECS would pick first (the cheapest choice) has no stock for this call only
    st.transientNostock = f && f.kind === 'nostock';
    const injected = f && faultAnswer(f, style);
    if (injected) return send(res, ...injected);
    const answer = await run();
    if (f && f.kind === 'timeout') await new Promise((r) => setTimeout(r, f.delay_ms || 2500));
    return send(res, ...answer);
  } catch (e) {
    if (e instanceof AuthError) {
      st.signatureFailures += 1;
      process.stderr.write(`alibaba emulator: ${action}: ${e.code}: ${e.message}\n`);
      return send(res, ...errorAnswer(style, e.code, e.message, e.status));
    }
    if (e instanceof ApiError) return send(res, ...errorAnswer(style, e.code, e.message, e.status));
    process.stderr.write(`alibaba emulator: ${action}: ${e.stack}\n`);
    return send(res, ...errorAnswer(style, 'InternalError', String(e.message), 500));
  }
}

function control(req, res, path, body) {
  let b = {};
  try { b = body.length ? JSON.parse(body) : {}; } catch (e) { return send(res, 400, 'text/plain', 'body is not JSON'); }
  const done = (obj) => send(res, 200, 'application/json', JSON.stringify(obj || { ok: true }));
  switch (`${req.method} ${path}`) {
    case 'POST /_emulator/faults':
      if (b.kind === 'nostock') {
        st.nostock.add(`${b.instance_type}|${b.zone}|${b.capacity_type}`);
      } else if (b.kind === 'sts_reject') {
        st.rejectOidc = b.count || 1;
      } else if (['throttle', 'error5xx', 'error', 'slow', 'timeout', 'random', 'transient_nostock'].includes(b.kind)) {
        const f = { kind: b.kind, count: b.count || 1, actions: b.actions || (b.action ? [b.action] : null), code: b.code,
          status: b.status, delay_ms: b.delay_ms, rate: b.rate || 0, kinds: b.kinds || ['throttle'] };
        if (b.kind === 'random') f.random = rng(b.seed || 1);
        st.faults.push(f);
      } else {
        return send(res, 400, 'text/plain', `unknown fault kind ${b.kind}`);
      }
      return done();
    case 'POST /_emulator/clear':
      st.faults = [];
      st.nostock.clear();
      st.rejectOidc = 0;
      return done();
    case 'POST /_emulator/events': {
      const text = svc.eventBody(st, b.kind, b.instance_id, b.deadline_ms);
      if (!text) return send(res, 400, 'text/plain', `unknown event kind ${b.kind}`);
      st.queue.push({ id: st.id('msg-').toUpperCase(), body: text, visibleAt: 0, enqueued: st.now() });
      return done();
    }
    case 'POST /_emulator/raw_event':
      st.queue.push({ id: st.id('msg-').toUpperCase(), body: b.body, visibleAt: 0, enqueued: st.now() });
      return done();
    case 'POST /_emulator/locks': {
      const inst = st.instances.get(b.instance_id);
      if (!inst) return send(res, 404, 'text/plain', 'no such instance');
      inst.locks.push(b.reason || 'Recycling');
      return done();
    }
    case 'POST /_emulator/credentials':
      st.credentialLifetimeS = b.lifetime_s;
      return done();
    case 'POST /_emulator/clock':
      st.clockOffsetMs = (b.offset_s || 0) * 1000;
      return done();
    case 'POST /_emulator/metadata':
      st.imdsTokenRequired = !!b.token_required;
      return done();
    case 'POST /_emulator/ack_images': // a new ACK image release, which ECS knows too
      st.ackImages.unshift(b);
      st.images.push({ ImageId: b.image_id, ImageName: b.image_name, Architecture: b.architecture, ImageFamily: '', ImageOwnerAlias: 'system', created: 9 });
      return done();
    case 'POST /_emulator/oidc':
      st.oidcTokens.add(b.token);
      return done();
    case 'GET /_emulator/state':
      return done({
        instances: [...st.instances.values()].map(({ seen, ...i }) => i),
        history: st.history.map(({ seen, ...i }) => i),
        counts: st.counts, signature_failures: st.signatureFailures, queue_length: st.queue.length,
        faults_injected: st.faultsInjected, faults_by_action: st.faultsByAction,
        keys_issued: [...st.keys.keys()].filter((k) => k.startsWith('STS.')).length,
      });
    case 'GET /_emulator/launches':
      return done({ launches: st.launches });
    default:
      return send(res, 404, 'text/plain', `unknown control ${req.method} ${path}`);
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    dispatch(req, res, Buffer.concat(chunks)).catch((e) => {
      process.stderr.write(`alibaba emulator: ${e.stack}\n`);
      send(res, 500, 'text/plain', 'emulator failure');
    });
  });
});
server.keepAliveTimeout = 30000;
server.listen(opts.port, '127.0.0.1', () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
});
const parent = process.ppid;
setInterval(() => {
  try { process.kill(parent, 0); } catch (e) { process.exit(0); }
  if (process.ppid !== parent) process.exit(0);
}, 500).unref();
process.on('SIGTERM', () => process.exit(0));
