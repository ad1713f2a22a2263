'use strict';
// Signature checks, each with an official SDK's own routine: ACS3-HMAC-SHA256 and RPC V1 (HMAC-SHA1) with
// @alicloud/openapi-util (getAuthorization, getRPCSignature), MNS's HMAC-SHA1 with the MNS SDK's signer
// (@alicloud/mns, Client.prototype.sign, which canonicalizes the x-mns-* headers itself); the emulator only rebuilds
// the request from what it received.
const crypto = require('crypto');
const OpenApiUtil = require('@alicloud/openapi-util').default;
const MnsClient = require('@alicloud/mns');

const MAX_SKEW_MS = 15 * 60 * 1000;

class AuthError extends Error {
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status || 400;
  }
}

// The secret and session token of an access key, or an AuthError.
function keyOf(state, ak) {
  const k = state.keys.get(ak);
  if (!k) throw new AuthError('InvalidAccessKeyId.NotFound', `Specified access key is not found: ${ak}`, 404);
  if (k.expires && k.expires < state.now()) throw new AuthError('InvalidSecurityToken.Expired', 'Specified SecurityToken is expired.', 400);
  return k;
}

function checkNonce(state, nonce) {
  if (!nonce) throw new AuthError('MissingSignatureNonce', 'SignatureNonce is mandatory for this action.');
  if (state.nonces.has(nonce)) throw new AuthError('SignatureNonceUsed', 'Specified signature nonce was used already.');
  state.nonces.add(nonce);
  if (state.nonces.size > 100000) state.nonces.clear();
}

function checkTime(state, iso) {
  const t = Date.parse(iso);
  if (!iso || isNaN(t) || Math.abs(t - state.now()) > MAX_SKEW_MS)
    throw new AuthError('InvalidTimeStamp.Expired', `Specified time stamp or date value is expired: ${iso}`);
}

// ACS3-HMAC-SHA256: Authorization "ACS3-HMAC-SHA256 Credential=AK,SignedHeaders=a;b,Signature=hex".
function verifyAcs3(state, req, query, body) {
  const auth = req.headers['authorization'] || '';
  const m = /^ACS3-HMAC-SHA256 Credential=([^,]+),SignedHeaders=([^,]+),Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) throw new AuthError('IncompleteSignature', 'The request signature does not conform to Aliyun standards.');
  const [, ak, signedHeaders] = m;
  const key = keyOf(state, ak);
  const sha = crypto.createHash('sha256').update(body).digest('hex');
  if (req.headers['x-acs-content-sha256'] !== sha)
    throw new AuthError('SignatureDoesNotMatch', 'x-acs-content-sha256 is not the SHA-256 of the body.');
  checkTime(state, req.headers['x-acs-date']);
  checkNonce(state, req.headers['x-acs-signature-nonce']);
  const names = Object.keys(req.headers).filter((h) => h === 'host' || h === 'content-type' || h.startsWith('x-acs-')).sort();
  if (names.join(';') !== signedHeaders)
    throw new AuthError('SignatureDoesNotMatch', `SignedHeaders ${signedHeaders} are not the headers sent (${names.join(';')}).`);
  const expected = OpenApiUtil.getAuthorization({ pathname: req.pathname, method: req.method, query, headers: req.headers },
    'ACS3-HMAC-SHA256', sha, ak, key.secret);
  if (expected !== auth) throw new AuthError('SignatureDoesNotMatch', 'Specified signature is not matched with our calculation.');
  if (key.token && req.headers['x-acs-security-token'] !== key.token)
    throw new AuthError('InvalidSecurityToken.Mismatch', 'Specified SecurityToken mismatch with the AccessKey.');
  return ak;
}

// RPC V1: Signature in the query, over every other parameter.
function verifyRpcV1(state, method, query) {
  const ak = query.AccessKeyId;
  const key = keyOf(state, ak);
  if (query.SignatureMethod !== 'HMAC-SHA1' || query.SignatureVersion !== '1.0')
    throw new AuthError('InvalidSignatureMethod', 'Specified signature method is not supported.');
  checkTime(state, query.Timestamp);
  checkNonce(state, query.SignatureNonce);
  const params = Object.assign({}, query);
  delete params.Signature;
  const expected = OpenApiUtil.getRPCSignature(params, method, key.secret);
  if (expected !== query.Signature) throw new AuthError('SignatureDoesNotMatch', 'Specified signature is not matched with our calculation.');
  if (key.token && query.SecurityToken !== key.token)
    throw new AuthError('InvalidSecurityToken.Mismatch', 'Specified SecurityToken mismatch with the AccessKey.');
  return ak;
}

// MNS: "MNS AK:Base64(HMAC-SHA1(secret, VERB\nContent-MD5\nContent-Type\nDate\nx-mns-headers\nresource))", computed
// by the MNS SDK's Client#sign over the headers as received (its only use of the client is accessKeySecret).
function verifyMns(state, req, rawPath) {
  const m = /^MNS ([^:]+):(.+)$/.exec(req.headers['authorization'] || '');
  if (!m) throw new AuthError('AccessDenied', 'The request has no MNS signature.', 403);
  const key = keyOf(state, m[1]);
  const date = req.headers['date'];
  if (!date || isNaN(Date.parse(date)) || Math.abs(Date.parse(date) - state.now()) > MAX_SKEW_MS)
    throw new AuthError('TimeExpired', 'The Date header is missing or too far from the server time.', 403);
  if (req.headers['x-mns-version'] !== '2015-06-06')
    throw new AuthError('InvalidArgument', 'x-mns-version must be 2015-06-06.', 400);
  const sig = MnsClient.prototype.sign.call({ accessKeySecret: key.secret }, req.method, req.headers, rawPath);
  if (sig !== m[2]) throw new AuthError('SignatureDoesNotMatch', 'The request signature we calculated does not match.', 403);
  if (key.token && req.headers['security-token'] !== key.token)
    throw new AuthError('InvalidSecurityToken', 'The security token does not match the access key.', 403);
  return m[1];
}

module.exports = { AuthError, verifyAcs3, verifyRpcV1, verifyMns };
