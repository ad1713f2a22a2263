"""JSON-protocol services of the emulator: SQS (AmazonSQS.*), SSM (AmazonSSM.*) and Pricing
(AWSPriceListService.*). Each handler takes the decoded request body and returns a JSON-serialisable answer or raises
JsonError, which the server turns into {"__type": ..., "message": ...}."""
import email.utils
import hashlib
import json
import secrets
import time


class JsonError(Exception):
    def __init__(self, type_, message, status=400, query_error=None):
        super().__init__(message)
        self.type = type_
        self.message = message
        self.status = status
        self.query_error = query_error  # SQS's historical code, sent in x-amzn-query-error


def event_body(state, kind, instance_id, extra):
    """An EventBridge event as the interruption queue receives it."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    arn = f"arn:aws:ec2:{state.region}:111122223333:instance/{instance_id}"
    detail_types = {
        "spot-interruption": ("aws.ec2", "EC2 Spot Instance Interruption Warning",
                              {"instance-id": instance_id, "instance-action": "terminate"}),
        "rebalance": ("aws.ec2", "EC2 Instance Rebalance Recommendation", {"instance-id": instance_id}),
        # Karpenter's detail-type (pkg/controllers/interruption/messages/capacityreservationinterruption); EC2's
        # documentation of interruptible reservations names it "EC2 Interruptible Capacity Reservation Instance
        # Interruption Warning" and adds instance-termination-time: `detail_type` and `termination_time` give them.
        "capacity-reservation-interruption": (
            "aws.ec2", extra.get("detail_type", "EC2 Capacity Reservation Instance Interruption Warning"),
            {"instance-id": instance_id, "instance-action": "terminate",
             **({"instance-termination-time": extra["termination_time"]} if "termination_time" in extra else {})}),
        "state-change": ("aws.ec2", "EC2 Instance State-change Notification",
                         {"instance-id": instance_id, "state": extra.get("state", "stopping")}),
        # As AWS Health sends them: startTime in RFC 1123, one entity per affected instance.
        "scheduled-change": ("aws.health", "AWS Health Event",
                             {"eventArn": f"arn:aws:health:{state.region}::event/EC2/"
                                          f"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/{secrets.token_hex(8)}",
                              "service": "EC2", "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
                              "eventTypeCategory": "scheduledChange",
                              "startTime": email.utils.formatdate(extra.get("start_epoch", time.time() + 7 * 86400),
                                                                  usegmt=True),
                              "affectedEntities": [{"entityValue": i}
                                                   for i in extra.get("instance_ids", [instance_id])]}),
    }
    if kind not in detail_types:
        raise ValueError(f"unknown event kind {kind}")
    source, detail_type, detail = detail_types[kind]
    return json.dumps({"version": "0", "id": secrets.token_hex(16), "detail-type": detail_type, "source": source,
                       "account": "111122223333", "time": now, "region": state.region, "resources": [arn],
                       "detail": detail})


def describe_cluster(state, service, name):
    """EKS DescribeCluster: (HTTP status, answer, extra headers). Endpoint and CA are made up but stable per name."""
    if service != "eks":
        return 400, {"message": f"signed for {service}, not eks"}, [("x-amzn-ErrorType", "InvalidSignatureException:")]
    with state.lock:
        known = name in state.clusters
    if not known:
        return 404, {"message": f"No cluster found for name: {name}."}, [
            ("x-amzn-ErrorType", "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.eks/")]
    digest = hashlib.sha256(name.encode()).hexdigest().upper()
    return 200, {"cluster": {
        "name": name, "arn": f"arn:aws:eks:{state.region}:111122223333:cluster/{name}", "version": "1.30",
        "endpoint": f"https://{digest[:32]}.gr7.{state.region}.eks.amazonaws.com", "status": "ACTIVE",
        "certificateAuthority": {"data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t" + digest[:16]},
        "kubernetesNetworkConfig": {"serviceIpv4Cidr": "10.100.0.0/16", "ipFamily": "ipv4"}}}, []


class Sqs:
    def __init__(self, state, base_url):
        self.s = state
        self.base_url = base_url

    def queue_url(self):
        return f"{self.base_url}/111122223333/{self.s.queue_name}"

    def _check_queue(self, body):
        if body.get("QueueUrl") != self.queue_url():
            raise JsonError("com.amazonaws.sqs#QueueDoesNotExist", "The specified queue does not exist.",
                            query_error="AWS.SimpleQueueService.NonExistentQueue;Sender")

    def GetQueueUrl(self, body):
        if body.get("QueueName") != self.s.queue_name:
            raise JsonError("com.amazonaws.sqs#QueueDoesNotExist", "The specified queue does not exist.",
                            query_error="AWS.SimpleQueueService.NonExistentQueue;Sender")
        return {"QueueUrl": self.queue_url()}

    def SendMessage(self, body):
        self._check_queue(body)
        self.s.enqueue(body.get("MessageBody", ""))
        return {"MessageId": secrets.token_hex(16),
                "MD5OfMessageBody": hashlib.md5(body.get("MessageBody", "").encode()).hexdigest()}

    def ReceiveMessage(self, body):
        self._check_queue(body)
        limit = min(int(body.get("MaxNumberOfMessages", 1)), 10)
        visibility = int(body.get("VisibilityTimeout", 30))
        wait = min(int(body.get("WaitTimeSeconds", 0)), 2)  # long polls are kept short in tests
        deadline = time.time() + wait
        while True:
            with self.s.lock:
                now = time.time()
                out = []
                for m in self.s.queue:
                    if len(out) >= limit:
                        break
                    if m["visible_at"] <= now:
                        m["visible_at"] = now + visibility
                        m["receipt"] = secrets.token_urlsafe(24)
                        out.append({"MessageId": m["id"], "ReceiptHandle": m["receipt"], "Body": m["body"],
                                    "MD5OfBody": hashlib.md5(m["body"].encode()).hexdigest()})
            if out or time.time() >= deadline:
                return {"Messages": out} if out else {}
            time.sleep(0.05)

    def ChangeMessageVisibility(self, body):
        self._check_queue(body)
        with self.s.lock:
            for m in self.s.queue:
                if m["receipt"] == body.get("ReceiptHandle"):
                    m["visible_at"] = time.time() + int(body.get("VisibilityTimeout", 0))
                    return {}
        raise JsonError("com.amazonaws.sqs#ReceiptHandleIsInvalid", "The input receipt handle is invalid.",
                        query_error="ReceiptHandleIsInvalid;Sender")

    def DeleteMessage(self, body):
        self._check_queue(body)
        with self.s.lock:
            before = len(self.s.queue)
            self.s.queue = [m for m in self.s.queue if m["receipt"] != body.get("ReceiptHandle")]
            if len(self.s.queue) == before:
                raise JsonError("com.amazonaws.sqs#ReceiptHandleIsInvalid",
                                "The input receipt handle is invalid.", query_error="ReceiptHandleIsInvalid;Sender")
        return {}


class Ssm:
    def __init__(self, state):
        self.s = state

    def GetParameter(self, body):
        name = body.get("Name", "")
        value = self.s.ssm_parameters.get(name)
        if value is None:
            raise JsonError("ParameterNotFound", f"Parameter {name} not found.")
        return {"Parameter": {"Name": name, "Type": "String", "Value": value, "Version": 1,
                              "ARN": f"arn:aws:ssm:{self.s.region}::parameter{name}", "DataType": "aws:ec2:image"}}


class Pricing:
    """GetProducts as AWS answers it: every product of the region (bare-metal types in their own family, "Compute
    Instance (bare metal)", with dedicated tenancy, as in the real price list), each also offered in the
    CapacityBlock market at another price, filtered by every TERM_MATCH filter. state.pricing_token_mode can make the
    last page carry an empty NextToken ("empty", as some SDK-fronted servers do) or repeat the token asked for
    ("repeat", a broken server)."""

    def __init__(self, state):
        self.s = state

    def products(self):
        for n in self.s.type_names:
            metal = n.endswith(".metal") or "metal-" in n
            for market in ("OnDemand", "CapacityBlock"):
                yield n, market, {
                    "productFamily": "Compute Instance (bare metal)" if metal else "Compute Instance",
                    "serviceCode": "AmazonEC2",
                    "instanceType": n, "regionCode": self.s.region, "operatingSystem": "Linux",
                    "tenancy": "Dedicated" if metal else "Shared", "preInstalledSw": "NA", "capacitystatus": "Used",
                    "marketoption": market}

    def GetProducts(self, body):
        if body.get("ServiceCode") != "AmazonEC2":
            raise JsonError("InvalidParameterException", "Only ServiceCode AmazonEC2 is emulated")
        wanted = {f["Field"]: f["Value"] for f in body.get("Filters", []) if f.get("Type") == "TERM_MATCH"}
        matching = [(n, market, attrs) for n, market, attrs in self.products()
                    if all(attrs.get(field, value) == value for field, value in wanted.items())]
        token = body.get("NextToken")
        start = int(token or 0) if token != "same-token" else 0
        size = min(int(body.get("MaxResults", 100)), 100)
        page = matching[start:start + size]
        products = []
        for n, market, attrs in page:
            sku = hashlib.sha1((n + market).encode()).hexdigest()[:16].upper()
            price = self.s.on_demand_price(n) * (1 if market == "OnDemand" else 3)
            family = attrs["productFamily"]
            products.append(json.dumps({
                "product": {"productFamily": family, "sku": sku,
                            "attributes": {k: v for k, v in attrs.items() if k not in ("productFamily", "serviceCode")}},
                "serviceCode": "AmazonEC2",
                "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {"priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                    "unit": "Hrs", "pricePerUnit": {"USD": f"{price:.10f}"}}}}}}}))
        answer = {"FormatVersion": "aws_v1", "PriceList": products}
        mode = self.s.pricing_token_mode
        if mode == "repeat" and start + size < len(matching):
            answer["NextToken"] = "same-token"
        elif start + size < len(matching):
            answer["NextToken"] = str(start + size)
        elif mode == "empty":
            answer["NextToken"] = ""
        return answer


def sqs_query(sqs, action, params):
    """SQS over the Query protocol (the SDKs' protocol for SQS before the JSON one): the same operations as Sqs,
    answered in XML. Raises JsonError like the JSON handlers."""
    from xml.sax.saxutils import escape
    body = {k: v for k, v in params.items() if k not in ("Action", "Version")}
    method = getattr(sqs, action, None) if action in ("GetQueueUrl", "SendMessage", "ReceiveMessage",
                                                      "DeleteMessage") else None
    if method is None:
        raise JsonError("InvalidAction", f"{action} is not emulated for sqs")
    answer = method(body)
    inner = ""
    if action == "GetQueueUrl":
        inner = f"<QueueUrl>{escape(answer['QueueUrl'])}</QueueUrl>"
    elif action == "SendMessage":
        inner = f"<MessageId>{answer['MessageId']}</MessageId><MD5OfMessageBody>{answer['MD5OfMessageBody']}" \
                f"</MD5OfMessageBody>"
    elif action == "ReceiveMessage":
        inner = "".join(f"<Message><MessageId>{m['MessageId']}</MessageId><ReceiptHandle>{escape(m['ReceiptHandle'])}"
                        f"</ReceiptHandle><MD5OfBody>{m['MD5OfBody']}</MD5OfBody><Body>{escape(m['Body'])}</Body>"
                        f"</Message>" for m in answer.get("Messages", []))
    result = f"<{action}Result>{inner}</{action}Result>" if action != "DeleteMessage" else ""
    return (f'<{action}Response xmlns="http://queue.amazonaws.com/doc/2012-11-05/">{result}<ResponseMetadata>'
            f"<RequestId>{secrets.token_hex(8)}-emu</RequestId></ResponseMetadata></{action}Response>")
