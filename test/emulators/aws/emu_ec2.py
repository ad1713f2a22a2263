"""EC2 Query API actions of the emulator: form parameters in, EC2-shaped XML out."""
import base64
import datetime
import fnmatch
import json
import secrets
import time
from xml.sax.saxutils import escape

NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
STATE_CODES = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48, "stopping": 64, "stopped": 80}


class Ec2Error(Exception):
    def __init__(self, code, message, status=400):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def error_xml(code, message):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{escape(code)}</Code>'
            f"<Message>{escape(message)}</Message></Error></Errors>"
            f"<RequestID>{secrets.token_hex(8)}-emu</RequestID></Response>")


def iso(epoch):
    return datetime.datetime.utcfromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def numbered(params, prefix):
    """Values of prefix.1, prefix.2, ... in order."""
    out, i = [], 1
    while f"{prefix}.{i}" in params:
        out.append(params[f"{prefix}.{i}"])
        i += 1
    return out


def filters(params):
    """Filter.N.Name / Filter.N.Value.M as {name: [values]}."""
    out, i = {}, 1
    while f"Filter.{i}.Name" in params:
        out[params[f"Filter.{i}.Name"]] = numbered(params, f"Filter.{i}.Value")
        i += 1
    return out


def tags_match(tags, flt):
    for name, values in flt.items():
        if name.startswith("tag:") and tags.get(name[4:]) not in values:
            return False
        if name == "tag-key" and not any(v in tags for v in values):
            return False
    return True


def tag_set(tags):
    if not tags:
        return ""
    items = "".join(f"<item><key>{escape(k)}</key><value>{escape(v)}</value></item>" for k, v in tags.items())
    return f"<tagSet>{items}</tagSet>"


def paginate(params, items, default_max=100):
    start = 0
    if params.get("NextToken"):
        try:
            start = int(base64.b64decode(params["NextToken"]).decode())
        except ValueError:
            raise Ec2Error("InvalidNextToken", "The token provided is invalid") from None
    size = min(int(params.get("MaxResults", default_max)), 1000)
    page = items[start:start + size]
    token = base64.b64encode(str(start + size).encode()).decode() if start + size < len(items) else None
    return page, (f"<nextToken>{token}</nextToken>" if token else "")


def response(action, inner):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<{action}Response xmlns="{NS}">'
            f"<requestId>{secrets.token_hex(8)}-emu</requestId>{inner}</{action}Response>")


def instance_type_xml(t):
    arch = "arm64" if t["arch"] == "arm64" else "x86_64"
    gpu = ""
    if t.get("gpu_count"):
        gpu = (f"<gpuInfo><gpus><item><name>{escape(t.get('gpu_name') or '')}</name>"
               f"<manufacturer>{escape((t.get('gpu_manufacturer') or '').upper())}</manufacturer><count>{t['gpu_count']}</count>"
               f"<memoryInfo><sizeInMiB>{t.get('gpu_memory_mib') or 0}</sizeInMiB></memoryInfo></item></gpus></gpuInfo>")
    storage = ""
    if t.get("local_nvme_gib"):
        storage = f"<instanceStorageInfo><totalSizeInGB>{t['local_nvme_gib']}</totalSizeInGB></instanceStorageInfo>"
    hypervisor = f"<hypervisor>{t['hypervisor']}</hypervisor>" if t.get("hypervisor") else ""
    clock = (t.get("cpu_sustained_clock_speed_mhz") or 0) / 1000
    cards = "".join(f"<item><networkCardIndex>{c['network_card_index']}</networkCardIndex>"
                    f"<maximumNetworkInterfaces>{c['max_interfaces']}</maximumNetworkInterfaces></item>"
                    for c in t.get("network_cards") or [])
    return (f"<item><instanceType>{t['name']}</instanceType>"
            f"<currentGeneration>{'true' if (t.get('generation') or 0) >= 5 else 'false'}</currentGeneration>"
            f"<supportedUsageClasses><item>on-demand</item><item>spot</item></supportedUsageClasses>"
            f"<bareMetal>{'true' if t.get('bare_metal') else 'false'}</bareMetal>{hypervisor}"
            f"<processorInfo><supportedArchitectures><item>{arch}</item></supportedArchitectures>"
            f"<sustainedClockSpeedInGhz>{clock}</sustainedClockSpeedInGhz></processorInfo>"
            f"<vCpuInfo><defaultVCpus>{t['vcpu']}</defaultVCpus></vCpuInfo>"
            f"<memoryInfo><sizeInMiB>{t['memory_mib']}</sizeInMiB></memoryInfo>{storage}{gpu}"
            f"<networkInfo><maximumNetworkInterfaces>{t.get('max_enis') or 0}</maximumNetworkInterfaces>"
            f"<ipv4AddressesPerInterface>{t.get('ipv4_per_eni') or 0}</ipv4AddressesPerInterface>"
            f"<defaultNetworkCardIndex>0</defaultNetworkCardIndex><networkCards>{cards}</networkCards></networkInfo>"
            f"<burstablePerformanceSupported>{'true' if t['name'].startswith('t') else 'false'}"
            f"</burstablePerformanceSupported></item>")


class Ec2:
    def __init__(self, state):
        self.s = state

    def handle(self, action, params):
        method = getattr(self, "do_" + action, None)
        if method is None:
            raise Ec2Error("InvalidAction", f"The action {action} is not valid for this web service.")
        return response(action, method(params))

    def do_DescribeAvailabilityZones(self, params):
        items = "".join(
            f"<item><zoneName>{z}</zoneName><zoneState>available</zoneState><regionName>{self.s.region}</regionName>"
            f"<zoneId>{zid}</zoneId><zoneType>availability-zone</zoneType>"
            f"<optInStatus>opt-in-not-required</optInStatus></item>" for z, zid in self.s.zones)
        return f"<availabilityZoneInfo>{items}</availabilityZoneInfo>"

    def do_DescribeInstanceTypes(self, params):
        wanted = numbered(params, "InstanceType")
        unknown = [n for n in wanted if n not in self.s.types]
        if unknown:
            raise Ec2Error("InvalidInstanceType", f"The following supplied instance types do not exist: [{unknown[0]}]")
        names = wanted or self.s.type_names
        page, token = paginate(params, names)
        return f"<instanceTypeSet>{''.join(instance_type_xml(self.s.types[n]) for n in page)}</instanceTypeSet>{token}"

    def do_DescribeInstanceTypeOfferings(self, params):
        flt = filters(params)
        location_type = params.get("LocationType", "region")
        rows = []
        for name in self.s.type_names:
            if "instance-type" in flt and name not in flt["instance-type"]:
                continue
            if location_type == "region":
                rows.append((name, self.s.region))
                continue
            for zone, zone_id in self.s.zones:
                location = zone if location_type == "availability-zone" else zone_id
                if self.s.offered(name, zone) and ("location" not in flt or location in flt["location"]):
                    rows.append((name, location))
        page, token = paginate(params, rows, 1000)
        items = "".join(f"<item><instanceType>{n}</instanceType><locationType>{location_type}</locationType>"
                        f"<location>{loc}</location></item>" for n, loc in page)
        return f"<instanceTypeOfferingSet>{items}</instanceTypeOfferingSet>{token}"

    def do_DescribeSpotPriceHistory(self, params):
        flt = filters(params)
        wanted = numbered(params, "InstanceType") or self.s.type_names
        zones = flt.get("availability-zone") or [z for z, _ in self.s.zones]
        rows = [(n, z) for n in wanted if n in self.s.prices for z in zones if self.s.offered(n, z)]
        page, token = paginate(params, rows, 1000)
        stamp = iso(time.time() - 300)
        items = "".join(f"<item><instanceType>{n}</instanceType><productDescription>Linux/UNIX</productDescription>"
                        f"<spotPrice>{self.s.spot_price(n, z):.6f}</spotPrice><timestamp>{stamp}</timestamp>"
                        f"<availabilityZone>{z}</availabilityZone></item>" for n, z in page)
        return f"<spotPriceHistorySet>{items}</spotPriceHistorySet>{token}"

    def do_DescribeSubnets(self, params):
        flt = filters(params)
        ids = numbered(params, "SubnetId")
        items = "".join(
            f"<item><subnetId>{s['id']}</subnetId><state>available</state><vpcId>vpc-0e000000000000001</vpcId>"
            f"<cidrBlock>{s['cidr']}</cidrBlock><availableIpAddressCount>{s['available']}</availableIpAddressCount>"
            f"<availabilityZone>{s['zone']}</availabilityZone><availabilityZoneId>{s['zone_id']}</availabilityZoneId>"
            f"{tag_set(s['tags'])}</item>"
            for s in self.s.subnets if (not ids or s["id"] in ids) and tags_match(s["tags"], flt))
        return f"<subnetSet>{items}</subnetSet>"

    def do_DescribeSecurityGroups(self, params):
        flt = filters(params)
        ids = numbered(params, "GroupId")
        names = flt.get("group-name")
        items = "".join(
            f"<item><ownerId>111122223333</ownerId><groupId>{g['id']}</groupId><groupName>{g['name']}</groupName>"
            f"<vpcId>vpc-0e000000000000001</vpcId>{tag_set(g['tags'])}</item>"
            for g in self.s.security_groups
            if (not ids or g["id"] in ids) and (not names or g["name"] in names) and tags_match(g["tags"], flt))
        return f"<securityGroupInfo>{items}</securityGroupInfo>"

    def do_DescribeImages(self, params):
        ids = numbered(params, "ImageId")
        owners = [{"self": "111122223333", "amazon": "602401143452"}.get(o, o) for o in numbered(params, "Owner")]
        flt = filters(params)
        names = flt.get("name")
        items = "".join(
            f"<item><imageId>{m['id']}</imageId><imageState>available</imageState>"
            f"<imageOwnerId>{m['owner']}</imageOwnerId><creationDate>{m['created']}</creationDate>"
            f"<architecture>{m['arch']}</architecture><name>{m['name']}</name>{tag_set(m['tags'])}</item>"
            for m in self.s.images
            if (not ids or m["id"] in ids) and (not names or any(fnmatch.fnmatchcase(m["name"], n) for n in names))
            and (not owners or m["owner"] in owners) and tags_match(m["tags"], flt))
        return f"<imagesSet>{items}</imagesSet>"

    def _reservation_xml(self, r):
        end = f"<endDate>{escape(r['end'])}</endDate><endDateType>limited</endDateType>" if r["end"] else \
            "<endDateType>unlimited</endDateType>"
        return (f"<item><capacityReservationId>{r['id']}</capacityReservationId><ownerId>{r['owner']}</ownerId>"
                f"<capacityReservationArn>arn:aws:ec2:{self.s.region}:{r['owner']}:capacity-reservation/{r['id']}"
                f"</capacityReservationArn><availabilityZoneId>{r['zone_id']}</availabilityZoneId>"
                f"<instanceType>{escape(r['instance_type'])}</instanceType><instancePlatform>Linux/UNIX"
                f"</instancePlatform><availabilityZone>{r['zone']}</availabilityZone><tenancy>default</tenancy>"
                f"<totalInstanceCount>{r['total']}</totalInstanceCount>"
                f"<availableInstanceCount>{r['available']}</availableInstanceCount><ebsOptimized>true</ebsOptimized>"
                f"<ephemeralStorage>false</ephemeralStorage><state>{r['state']}</state>"
                f"<startDate>{iso(r['created'])}</startDate>{end}"
                f"<instanceMatchCriteria>{r['match']}</instanceMatchCriteria><createDate>{iso(r['created'])}"
                f"</createDate>{tag_set(r['tags'])}<reservationType>{r['type']}</reservationType>"
                f"<interruptible>false</interruptible></item>")

    RESERVATION_FILTERS = {"state": "state", "owner-id": "owner", "instance-type": "instance_type",
                           "availability-zone": "zone", "instance-match-criteria": "match"}

    def do_DescribeCapacityReservations(self, params):
        ids = numbered(params, "CapacityReservationId")
        flt = filters(params)
        if ids and "MaxResults" in params:
            raise Ec2Error("InvalidParameterCombination",
                           "The parameter CapacityReservationIds cannot be used with the parameter MaxResults")
        with self.s.lock:
            missing = [i for i in ids if i not in self.s.capacity_reservations]
            if missing:
                raise Ec2Error("InvalidCapacityReservationId.NotFound",
                               f"The capacity reservation ID '{missing[0]}' does not exist")
            rows = [r for r in self.s.capacity_reservations.values()
                    if (not ids or r["id"] in ids) and tags_match(r["tags"], flt)
                    and all(r[key] in flt[name] for name, key in self.RESERVATION_FILTERS.items() if name in flt)]
            page, token = paginate(params, rows, 1000)
            items = "".join(self._reservation_xml(r) for r in page)
        return f"<capacityReservationSet>{items}</capacityReservationSet>{token}"

    def _template_xml(self, t):
        return (f"<launchTemplateId>{t['id']}</launchTemplateId><launchTemplateName>{escape(t['name'])}"
                f"</launchTemplateName><defaultVersionNumber>1</defaultVersionNumber>"
                f"<latestVersionNumber>1</latestVersionNumber><createTime>{iso(t['created'])}</createTime>"
                f"{tag_set(t['tags'])}")

    def do_CreateLaunchTemplate(self, params):
        name = params.get("LaunchTemplateName", "")
        with self.s.lock:
            if any(t["name"] == name for t in self.s.launch_templates.values()):
                raise Ec2Error("InvalidLaunchTemplateName.AlreadyExistsException",
                               f"Launch template name already in use: {name}")
            tags = {}
            for i in range(1, 50):
                key = params.get(f"TagSpecification.1.Tag.{i}.Key")
                if key is None:
                    break
                tags[key] = params.get(f"TagSpecification.1.Tag.{i}.Value", "")
            data = {k[len("LaunchTemplateData."):]: v for k, v in params.items() if k.startswith("LaunchTemplateData.")}
            t = {"id": "lt-0e" + secrets.token_hex(8)[:15], "name": name, "created": time.time(), "tags": tags,
                 "data": data}
            self.s.launch_templates[t["id"]] = t
        return f"<launchTemplate>{self._template_xml(t)}</launchTemplate>"

    def do_DescribeLaunchTemplates(self, params):
        names = numbered(params, "LaunchTemplateName")
        flt = filters(params)
        with self.s.lock:
            found = [t for t in self.s.launch_templates.values()
                     if (not names or t["name"] in names) and tags_match(t["tags"], flt)]
        if names and not found:
            raise Ec2Error("InvalidLaunchTemplateName.NotFoundException",
                           "At least one of the launch templates specified in the request does not exist.")
        page, token = paginate(params, found)
        return f"<launchTemplates>{''.join('<item>' + self._template_xml(t) + '</item>' for t in page)}" \
               f"</launchTemplates>{token}"

    def do_DeleteLaunchTemplate(self, params):
        with self.s.lock:
            t = self.s.launch_templates.pop(params.get("LaunchTemplateId", ""), None)
        if not t:
            raise Ec2Error("InvalidLaunchTemplateId.NotFound", "The specified launch template does not exist.")
        return f"<launchTemplate>{self._template_xml(t)}</launchTemplate>"

    def _template(self, params, n):
        spec = f"LaunchTemplateConfigs.{n}.LaunchTemplateSpecification."
        lt, name = params.get(spec + "LaunchTemplateId"), params.get(spec + "LaunchTemplateName")
        template = self.s.launch_templates.get(lt) if lt else next(
            (t for t in self.s.launch_templates.values() if t["name"] == name), None)
        if template is None:
            raise Ec2Error("InvalidLaunchTemplateId.NotFound",
                           f"The specified launch template, with template ID {lt or name}, does not exist.")
        return template

    def _overrides(self, params):
        """The overrides of every LaunchTemplateConfigs.N, each with its launch template."""
        out, n = [], 1
        while f"LaunchTemplateConfigs.{n}.LaunchTemplateSpecification.LaunchTemplateId" in params or \
                f"LaunchTemplateConfigs.{n}.LaunchTemplateSpecification.LaunchTemplateName" in params:
            template = self._template(params, n)
            i = 1
            while f"LaunchTemplateConfigs.{n}.Overrides.{i}.InstanceType" in params:
                p = f"LaunchTemplateConfigs.{n}.Overrides.{i}."
                subnet = params.get(p + "SubnetId")
                zone = params.get(p + "AvailabilityZone")
                if subnet and not zone:
                    zone = next((sn["zone"] for sn in self.s.subnets if sn["id"] == subnet), None)
                out.append({"type": params[p + "InstanceType"], "subnet": subnet, "zone": zone, "template": template,
                            "priority": float(params.get(p + "Priority", len(out) + 1))})
                i += 1
            n += 1
        return out

    STRATEGIES = {"spot": ("price-capacity-optimized", "capacity-optimized", "lowest-price", "diversified"),
                  "on-demand": ("lowest-price", "prioritized")}

    def do_CreateFleet(self, params):
        if params.get("Type") != "instant":
            raise Ec2Error("InvalidParameterValue", "The emulator supports fleets of type instant only")
        token = params.get("ClientToken")
        signature = json.dumps(sorted((k, v) for k, v in params.items() if k != "ClientToken"))
        with self.s.lock:
            self.s.fleet_requests.append(dict(params))
            del self.s.fleet_requests[:-200]
            if token and token in self.s.fleets_by_token:
                previous_signature, previous = self.s.fleets_by_token[token]
                if previous_signature != signature:
                    raise Ec2Error("IdempotentParameterMismatch",
                                   f"Client token {token} was used with different parameters")
                return previous
            capacity_type = params.get("TargetCapacitySpecification.DefaultTargetCapacityType", "on-demand")
            target = int(params.get("TargetCapacitySpecification.TotalTargetCapacity", "1"))
            overrides = self._overrides(params)
            if not overrides:
                raise Ec2Error("MissingParameter", "LaunchTemplateConfigs.N.Overrides is required")
            for o in overrides:
                if o["type"] not in self.s.types or o["zone"] is None:
                    raise Ec2Error("InvalidParameterValue", f"Invalid override {o['type']} in {o['subnet']}")
                o["price"] = (self.s.spot_price(o["type"], o["zone"]) if capacity_type == "spot"
                              else self.s.on_demand_price(o["type"]))
            options = "SpotOptions" if capacity_type == "spot" else "OnDemandOptions"
            strategy = params.get(f"{options}.AllocationStrategy", "lowest-price")
            if strategy not in self.STRATEGIES.get(capacity_type, ()):
                raise Ec2Error("InvalidParameterValue", f"{strategy} is not an allocation strategy for {capacity_type}")
            # Every offering has capacity until a shortage is injected, so price-capacity-optimized picks by price.
            strategy_key = (lambda o: (o["priority"], o["price"])) if strategy == "prioritized" else (lambda o: o["price"])
            tags = {}
            for n in range(1, 20):
                if params.get(f"TagSpecification.{n}.ResourceType") is None:
                    break
                if params[f"TagSpecification.{n}.ResourceType"] != "instance":
                    continue
                for i in range(1, 100):
                    key = params.get(f"TagSpecification.{n}.Tag.{i}.Key")
                    if key is None:
                        break
                    tags[key] = params.get(f"TagSpecification.{n}.Tag.{i}.Value", "")
            errors, launched = [], []
            for o in sorted(overrides, key=strategy_key):
                if len(launched) >= target:
                    break
                if not self.s.offered(o["type"], o["zone"]):
                    errors.append((o, "Unsupported", f"Your requested instance type ({o['type']}) is not supported "
                                                     f"in your requested Availability Zone ({o['zone']})."))
                elif o["template"]["data"].get("IamInstanceProfile.Name", "") not in self.s.instance_profiles | {""}:
                    profile = o["template"]["data"]["IamInstanceProfile.Name"]
                    errors.append((o, "InvalidParameterValue", f"Value ({profile}) for parameter iamInstanceProfile.name "
                                                               "is invalid. Invalid IAM Instance Profile name"))
                elif self._reservation_refusal(o):
                    code, msg = self._reservation_refusal(o)
                    errors.append((o, code, msg))
                elif (o["type"], o["zone"], capacity_type) in self.s.ice:
                    errors.append((o, "InsufficientInstanceCapacity",
                                   f"We currently do not have sufficient {o['type']} capacity in the Availability "
                                   f"Zone you requested ({o['zone']})."))
                else:
                    launched.append((o, self._launch(o, capacity_type, o["template"], tags, token)))
            body = f"<fleetId>fleet-{secrets.token_hex(4)}-{secrets.token_hex(2)}-emu</fleetId>"
            body += "<errorSet>" + "".join(
                f"<item><errorCode>{code}</errorCode><errorMessage>{escape(msg)}</errorMessage>"
                f"<launchTemplateAndOverrides>{self._override_xml(o['template'], o)}</launchTemplateAndOverrides>"
                f"<lifecycle>{capacity_type}</lifecycle></item>" for o, code, msg in errors) + "</errorSet>"
            body += "<fleetInstanceSet>" + "".join(
                f"<item><instanceIds><item>{iid}</item></instanceIds><instanceType>{o['type']}</instanceType>"
                f"<launchTemplateAndOverrides>{self._override_xml(o['template'], o)}</launchTemplateAndOverrides>"
                f"<lifecycle>{capacity_type}</lifecycle><platform>Linux/UNIX</platform></item>"
                for o, iid in launched) + "</fleetInstanceSet>"
            if token:
                self.s.fleets_by_token[token] = (signature, body)
            return body

    @staticmethod
    def _override_xml(template, o):
        subnet = f"<subnetId>{o['subnet']}</subnetId>" if o["subnet"] else ""
        return (f"<launchTemplateSpecification><launchTemplateId>{template['id']}</launchTemplateId>"
                f"<version>1</version></launchTemplateSpecification><overrides><instanceType>{o['type']}"
                f"</instanceType>{subnet}<availabilityZone>{o['zone']}</availabilityZone></overrides>")

    @staticmethod
    def _reservation_target(template):
        data = template["data"]
        if data.get("CapacityReservationSpecification.CapacityReservationPreference") == "capacity-reservations-only":
            return data.get("CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId")
        return None

    def _reservation_refusal(self, o):
        """(code, message) when the override's template targets a reservation that cannot take it, as EC2 answers;
        None when it targets none or the reservation has room."""
        rid = self._reservation_target(o["template"])
        if rid is None:
            return None
        r = self.s.capacity_reservations.get(rid)
        if r is None:
            return "InvalidCapacityReservationId.NotFound", f"The capacity reservation ID '{rid}' does not exist"
        if r["instance_type"] != o["type"] or r["zone"] != o["zone"]:
            return ("InvalidParameterCombination", f"The instance type {o['type']} in {o['zone']} does not match "
                    f"capacity reservation {rid} ({r['instance_type']} in {r['zone']})")
        if r["state"] != "active" or r["available"] <= 0:
            return ("ReservationCapacityExceeded", f"The requested number of instances exceeds the available "
                    f"capacity of capacity reservation {rid}")
        return None

    def _launch(self, o, capacity_type, template, tags, token):
        iid = "i-0e" + secrets.token_hex(8)[:15]
        data = template["data"]
        reservation = self._reservation_target(template)
        if reservation is not None:
            self.s.capacity_reservations[reservation]["available"] -= 1
        image = data.get("ImageId", self.s.images[0]["id"])
        groups = numbered(data, "SecurityGroupId") or numbered(data, "NetworkInterface.1.SecurityGroupId")
        self.s.instances[iid] = {"id": iid, "type": o["type"], "zone": o["zone"], "subnet": o["subnet"],
                                 "capacity_type": capacity_type, "image": image, "state": "pending",
                                 "launched": time.time(), "tags": dict(tags), "groups": groups,
                                 "template": template["id"], "token": token, "reservation": reservation}
        return iid

    def _instance_xml(self, i):
        lifecycle = "<instanceLifecycle>spot</instanceLifecycle>" if i["capacity_type"] == "spot" else ""
        subnet = f"<subnetId>{i['subnet']}</subnetId>" if i["subnet"] else ""
        names = {g["id"]: g["name"] for g in self.s.security_groups}
        groups = "".join(f"<item><groupId>{g}</groupId><groupName>{escape(names.get(g, g))}</groupName></item>"
                         for g in i.get("groups", []))
        subnet += f"<groupSet>{groups}</groupSet>"
        if i.get("reservation"):
            subnet += (f"<capacityReservationId>{i['reservation']}</capacityReservationId>"
                       "<capacityReservationSpecification><capacityReservationPreference>capacity-reservations-only"
                       f"</capacityReservationPreference><capacityReservationTarget><capacityReservationId>"
                       f"{i['reservation']}</capacityReservationId></capacityReservationTarget>"
                       "</capacityReservationSpecification>")
        return (f"<item><instanceId>{i['id']}</instanceId><imageId>{i['image']}</imageId>"
                f"<instanceState><code>{STATE_CODES[i['state']]}</code><name>{i['state']}</name></instanceState>"
                f"<privateDnsName>ip-10-0-0-1.ec2.internal</privateDnsName><instanceType>{i['type']}</instanceType>"
                f"<launchTime>{iso(i['launched'])}</launchTime><placement><availabilityZone>{i['zone']}"
                f"</availabilityZone></placement>{subnet}<privateIpAddress>10.0.0.1</privateIpAddress>{lifecycle}"
                f"{tag_set(i['tags'])}</item>")

    def _settle(self):
        """A launched instance is running, a terminating one terminated, by the time anyone looks again."""
        for i in self.s.instances.values():
            if i["state"] == "pending":
                i["state"] = "running"
            elif i["state"] == "shutting-down":
                i["state"] = "terminated"

    def do_DescribeInstances(self, params):
        ids = numbered(params, "InstanceId")
        flt = filters(params)
        with self.s.lock:
            missing = [i for i in ids if i not in self.s.instances]
            if missing:
                raise Ec2Error("InvalidInstanceID.NotFound", f"The instance ID '{missing[0]}' does not exist")
            self._settle()
            rows = [i for i in self.s.instances.values()
                    if (not ids or i["id"] in ids) and tags_match(i["tags"], flt)
                    and ("instance-state-name" not in flt or i["state"] in flt["instance-state-name"])
                    and ("instance-id" not in flt or i["id"] in flt["instance-id"])]
            page, token = paginate(params, rows, 1000)
            body = "".join(f"<item><reservationId>r-{i['id'][2:]}</reservationId><ownerId>111122223333</ownerId>"
                           f"<instancesSet>{self._instance_xml(i)}</instancesSet></item>" for i in page)
        return f"<reservationSet>{body}</reservationSet>{token}"

    @staticmethod
    def _check_xml(health, which):
        """instanceStatus or systemStatus: "ok", or "impaired" with its reachability check failed since a time."""
        impaired = health.get(which) == "impaired"
        since = f"<impairedSince>{iso(health['impaired_since'])}</impairedSince>" if impaired else ""
        return (f"<{which}><status>{'impaired' if impaired else 'ok'}</status><details><item><name>reachability"
                f"</name><status>{'failed' if impaired else 'passed'}</status>{since}</item></details></{which}>")

    def _status_xml(self, i):
        health = i.get("health") or {}
        events = "".join(f"<item><instanceEventId>instance-event-{n:017x}</instanceEventId><code>{escape(e['code'])}"
                         f"</code><description>{escape(e.get('description', 'The instance is scheduled for ' + e['code']))}"
                         f"</description><notBefore>{iso(e['not_before'])}</notBefore></item>"
                         for n, e in enumerate(health.get("events", [])))
        return (f"<item><instanceId>{i['id']}</instanceId><availabilityZone>{i['zone']}</availabilityZone>"
                f"<instanceState><code>{STATE_CODES[i['state']]}</code><name>{i['state']}</name></instanceState>"
                f"{self._check_xml(health, 'systemStatus')}{self._check_xml(health, 'instanceStatus')}"
                f"<eventsSet>{events}</eventsSet></item>")

    @staticmethod
    def _status_matches(i, flt):
        health = i.get("health") or {}
        checks = {"instance-status.status": health.get("instanceStatus", "ok"),
                  "system-status.status": health.get("systemStatus", "ok"),
                  "availability-zone": i["zone"], "instance-state-name": i["state"]}
        for name, values in flt.items():
            if name == "event.code":
                if not any(e["code"] in values for e in health.get("events", [])):
                    return False
            elif name not in checks:
                raise Ec2Error("InvalidParameterValue", f"The filter '{name}' is invalid")
            elif checks[name] not in values:
                return False
        return True

    def do_DescribeInstanceStatus(self, params):
        """As EC2 answers: running instances only unless IncludeAllInstances (then terminated ones too, for the hour
        EC2 keeps them), filters of different names ANDed."""
        ids = numbered(params, "InstanceId")
        flt = filters(params)
        everything = params.get("IncludeAllInstances", "false") == "true"
        with self.s.lock:
            missing = [i for i in ids if i not in self.s.instances]
            if missing:
                raise Ec2Error("InvalidInstanceID.NotFound", f"The instance ID '{missing[0]}' does not exist")
            self._settle()
            rows = [i for i in self.s.instances.values()
                    if (not ids or i["id"] in ids) and (everything or i["state"] == "running")
                    and self._status_matches(i, flt)]
            page, token = paginate(params, rows, 1000)
            body = "".join(self._status_xml(i) for i in page)
        return f"<instanceStatusSet>{body}</instanceStatusSet>{token}"

    def do_TerminateInstances(self, params):
        ids = numbered(params, "InstanceId")
        with self.s.lock:
            missing = [i for i in ids if i not in self.s.instances]
            if missing:
                raise Ec2Error("InvalidInstanceID.NotFound", f"The instance ID '{missing[0]}' does not exist")
            items = ""
            for iid in ids:
                i = self.s.instances[iid]
                previous = i["state"]
                if previous not in ("terminated", "shutting-down"):
                    i["state"] = "shutting-down"
                    if i.get("reservation") in self.s.capacity_reservations:  # the slot is free again
                        self.s.capacity_reservations[i["reservation"]]["available"] += 1
                items += (f"<item><instanceId>{iid}</instanceId><currentState><code>{STATE_CODES[i['state']]}</code>"
                          f"<name>{i['state']}</name></currentState><previousState><code>{STATE_CODES[previous]}"
                          f"</code><name>{previous}</name></previousState></item>")
        return f"<instancesSet>{items}</instancesSet>"

    def do_CreateTags(self, params):
        ids = numbered(params, "ResourceId")
        with self.s.lock:
            for iid in ids:
                if iid not in self.s.instances:
                    raise Ec2Error("InvalidInstanceID.NotFound", f"The instance ID '{iid}' does not exist")
            for i in range(1, 100):
                key = params.get(f"Tag.{i}.Key")
                if key is None:
                    break
                for iid in ids:
                    self.s.instances[iid]["tags"][key] = params.get(f"Tag.{i}.Value", "")
        return "<return>true</return>"
