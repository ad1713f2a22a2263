#!/usr/bin/python3
"""Cross-checks the provider's SigV4 signer against botocore, an independent implementation.

1. Every vector in sigv4-vectors/ is signed with botocore.auth.SigV4Auth and compared with the vector's .authz, so the
   fixture files are checked by a second signer as well as by test_sigv4.c.
2. A few hundred random requests (methods, hosts with ports, paths with dot segments, spaces, UTF-8, repeated and
   unsorted query parameters, repeated and untrimmed headers, bodies, session tokens, times, regions) are signed by
   the C signer (sigv4_sign_tool, reading JSON on stdin) and by botocore at the same instant; the Authorization
   headers must be identical.

Usage: sigv4_botocore_check.py SIGN_TOOL VECTORS_DIR [SEED]
Queries are given in their wire form, percent-encoded the way botocore itself encodes them, because botocore signs
the query of a URL as it finds it while the C signer re-encodes it: for wire-form input both must agree.
"""
import datetime
import json
import os
import random
import subprocess
import sys
from unittest import mock
from urllib.parse import quote, unquote

import botocore.auth
import botocore.credentials
from botocore.awsrequest import AWSRequest


def botocore_sign(method, host, path, query, headers, body, access_key, secret_key, token, region, service, epoch):
    url = "https://" + host + path + ("?" + query if query else "")
    request = AWSRequest(method=method, url=url, data=body.encode() if body else b"")
    for name, value in headers:
        request.headers[name] = value
    creds = botocore.credentials.Credentials(access_key, secret_key, token)
    instant = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).replace(tzinfo=None)

    class FixedDatetime(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return instant

    with mock.patch.object(botocore.auth.datetime, "datetime", FixedDatetime):
        botocore.auth.SigV4Auth(creds, service, region).add_auth(request)
    return request.headers["Authorization"], request.headers["X-Amz-Date"]


def parse_req(text):
    head, _, body = text.partition("\n\n")
    lines = head.split("\n")
    method, rest = lines[0].split(" ", 1)
    uri = rest.rsplit(" ", 1)[0]
    path, _, query = uri.partition("?")
    headers, host, token = [], None, None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "host":
            host = value
        elif name.lower() == "x-amz-security-token":
            token = value
        elif name.lower() != "x-amz-date":
            headers.append((name, value))
    return method, host, path, query, headers, body, token


def wire_query(query):
    pairs = []
    for part in query.split("&") if query else []:
        key, _, value = part.partition("=")
        pairs.append(quote(unquote(key), safe="-_.~") + "=" + quote(unquote(value), safe="-_.~"))
    return "&".join(pairs)


def check_vectors(vectors_dir):
    failures = 0
    names = sorted(f[:-4] for f in os.listdir(vectors_dir) if f.endswith(".req"))
    for name in names:
        with open(os.path.join(vectors_dir, name + ".req"), encoding="utf-8") as f:
            method, host, path, query, headers, body, token = parse_req(f.read())
        with open(os.path.join(vectors_dir, name + ".authz"), encoding="utf-8") as f:
            expected = f.read()
        authz, _ = botocore_sign(method, host, path, wire_query(query), headers, body, "AKIDEXAMPLE",
                                 "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token, "us-east-1", "service",
                                 1440938160)
        if authz != expected:
            failures += 1
            print(f"FAIL vector {name}: botocore gives {authz}, the vector says {expected}")
    print(f"vectors: {len(names)} checked with botocore, {failures} failed")
    return len(names), failures


SEGMENTS = ["a", "example", "..", ".", "", "x y", "caf\u00e9", "\u1234", "-_.~", "p%20q", "A+B", "k=v", "semi;colon"]
KEYS = ["Action", "Version", "Filter.1.Name", "Filter.1.Value.1", "InstanceId.1", "a", "B", "b", "sp ace", "\u00fc",
        "x=y", "amp&", "NextToken", "empty"]
VALUES = ["", "1", "DescribeInstances", "2016-11-15", "tag:karpenter.sh/nodepool", "a b", "\u20ac", "+", "/", "~",
          "value=with=equals", "Z", "z"]
HEADER_NAMES = ["Content-Type", "content-type", "X-Amz-Target", "My-Header", "my-header", "X-Custom", "Accept"]
HEADER_VALUES = ["application/x-www-form-urlencoded; charset=utf-8", "  padded  ", "a   b\tc", "AmazonSQS.ReceiveMessage",
                 "UPPER", "x", "1,2"]


def random_request(rng):
    path = "/" + "/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(0, 4)))
    if rng.random() < 0.3:
        path += "/"
    wire_path = quote(path, safe="/%+=;")
    params = [(rng.choice(KEYS), rng.choice(VALUES)) for _ in range(rng.randint(0, 6))]
    query = "&".join(quote(k, safe="-_.~") + "=" + quote(v, safe="-_.~") for k, v in params)
    headers = [(rng.choice(HEADER_NAMES), rng.choice(HEADER_VALUES)) for _ in range(rng.randint(0, 4))]
    method = rng.choice(["GET", "POST", "PUT", "DELETE"])
    body = rng.choice([None, "", "Action=DescribeInstances&Version=2016-11-15", '{"QueueUrl":"q"}', "\u00e9t\u00e9"])
    return {
        "method": method,
        "host": rng.choice(["ec2.us-east-1.amazonaws.com", "127.0.0.1:4566", "sts.amazonaws.com", "localhost:8080"]),
        "path": wire_path,
        "query": query or None,
        "headers": [list(h) for h in headers],
        "body": body,
        "access_key": rng.choice(["AKIDEXAMPLE", "ASIAQWERTY12345"]),
        "secret_key": rng.choice(["wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "s3cr3t+/=", "x"]),
        "token": rng.choice([None, "IQoJb3JpZ2luX2VjEXAMPLE//+==", "short"]),
        "region": rng.choice(["us-east-1", "eu-west-3", "cn-north-1", "us-gov-west-1"]),
        "service": rng.choice(["ec2", "sts", "sqs", "ssm", "pricing"]),
        "time": rng.randint(946684800, 1893456000),
    }


def check_random(tool, seed, count):
    rng = random.Random(seed)
    requests = [random_request(rng) for _ in range(count)]
    proc = subprocess.run([tool], input=json.dumps(requests), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"FAIL sign tool exited {proc.returncode}: {proc.stderr}")
        return count, count
    results = json.loads(proc.stdout)
    failures = 0
    for req, got in zip(requests, results):
        authz, amz_date = botocore_sign(req["method"], req["host"], req["path"], req["query"], req["headers"],
                                        req["body"], req["access_key"], req["secret_key"], req["token"],
                                        req["region"], req["service"], req["time"])
        if got is None or got["authorization"] != authz or got["amz_date"] != amz_date:
            failures += 1
            if failures <= 5:
                print(f"FAIL random request {json.dumps(req)}\n  C:        {got}\n  botocore: {authz} {amz_date}")
    print(f"random: {count} requests (seed {seed}) signed by both, {failures} differed")
    return count, failures


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    tool, vectors_dir = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20150830
    n_vectors, vector_failures = check_vectors(vectors_dir)
    n_random, random_failures = check_random(tool, seed, 400)
    if n_vectors < 29:
        print(f"FAIL only {n_vectors} vectors found in {vectors_dir}")
        return 1
    return 1 if vector_failures or random_failures else 0


if __name__ == "__main__":
    sys.exit(main())
