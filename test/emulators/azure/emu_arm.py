"""ARM resource providers: Microsoft.Compute (virtualMachines, their instance view, operations, Resource SKUs),
Microsoft.Network (networkInterfaces) and Microsoft.ResourceHealth (availabilityStatuses).

Each handler returns (status, headers, body). Requests are checked as ARM checks them: the api-version must be one ARM
publishes for the resource type, bodies must carry what the resource provider requires and nothing it refuses
(errors {"error": {"code", "message"}}). Creating a VM is a long-running operation (201 + Azure-AsyncOperation);
deleting one is too (202 + Location and Azure-AsyncOperation)."""
import base64
import copy
import re
import time
import uuid

import emu_catalog

API_VERSIONS = {
    "compute": {"2023-09-01", "2024-03-01", "2024-07-01", "2024-11-01", "2025-04-01", "2026-03-01"},
    "skus": {"2019-04-01", "2021-07-01"},
    "network": {"2023-09-01", "2024-05-01", "2025-05-01"},
    "health": {"2022-10-01", "2025-05-01"},
    "gallery": {"2022-03-03", "2022-08-03", "2023-07-03", "2024-03-03", "2025-03-03"},
}
# The AKS node images the community galleries publish, by gallery, definition and version. AKS publishes no FIPS
# image there (the reference port: FIPS images are in AKS's shared image gallery only).
GALLERY_IMAGES = {
    "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2": ["2204containerd", "2204gen2containerd",
                                                       "2204gen2arm64containerd", "2404containerd",
                                                       "2404gen2containerd", "2404gen2arm64containerd"],
    "AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b": ["V2", "V2gen2", "V2gen2arm64"],
}
GALLERY_VERSIONS = ("202510.01.0", "202511.07.0")


def gallery_image_exists(gallery, image, version):
    return image in GALLERY_IMAGES.get(gallery, []) and version in GALLERY_VERSIONS
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}[A-Za-z0-9_]$")
VM_PROPERTIES = {"hardwareProfile", "storageProfile", "osProfile", "networkProfile", "priority", "evictionPolicy",
                 "billingProfile", "securityProfile", "diagnosticsProfile", "userData", "additionalCapabilities",
                 "licenseType", "availabilitySet", "proximityPlacementGroup", "capacityReservation"}


# ARM's reserved administrator names (Windows and Linux), and Windows' computer name rules.
RESERVED_ADMINS = {"administrator", "admin", "user", "user1", "test", "user2", "test1", "user3", "admin1", "1", "123",
                   "a", "actuser", "adm", "admin2", "aspnet", "backup", "console", "david", "guest", "john", "owner",
                   "root", "server", "sql", "support", "support_388945a0", "sys", "test2", "test3", "user4", "user5"}


def windows_os_profile(os_profile):
    """The message ARM refuses a Windows VM's osProfile with, or None."""
    name = os_profile.get("computerName", "")
    if len(name) > 15 or name.isdigit() or not re.fullmatch(r"[A-Za-z0-9-]+", name):
        return (f"Windows computer name '{name}' cannot be more than 15 characters long, be entirely numeric, or "
                "contain the following characters: ` ~ ! @ # $ % ^ & * ( ) = + _ [ ] { } \\ | ; : . ' \" , < > / ?.")
    user = os_profile.get("adminUsername", "")
    if len(user) > 20 or user.lower() in RESERVED_ADMINS or user.endswith("."):
        return f"The admin username '{user}' is not allowed."
    password = os_profile.get("adminPassword") or ""
    classes = sum(bool(re.search(p, password)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    if not 12 <= len(password) <= 123 or classes < 3:
        return ("The supplied password must be between 12-123 characters long and must satisfy at least 3 of password "
                "complexity requirements from the following: 1) Contains an uppercase character 2) Contains a "
                "lowercase character 3) Contains a numeric digit 4) Contains a special character.")
    if "windowsConfiguration" in os_profile and not isinstance(os_profile["windowsConfiguration"], dict):
        return "windowsConfiguration must be an object."
    return None


def err(status, code, message, headers=None):
    return status, headers or {}, {"error": {"code": code, "message": message}}


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".0000000+00:00"


# The Custom Script handlers' own settings (Windows 1.10, Linux 2.x): what either accepts publicly and protected.
SCRIPT_SETTINGS = {"public": {"fileUris", "commandToExecute", "timestamp", "skipDos2Unix", "script"},
                   "protected": {"fileUris", "commandToExecute", "storageAccountName", "storageAccountKey",
                                 "managedIdentity", "script"}}


def script_handler_error(props):
    """The extension's terminal failure as the Custom Script handler reports it on the VM, or None: one command,
    in exactly one of the settings, a string, and no key the handler does not know."""
    public, protected = props.get("settings") or {}, props.get("protectedSettings") or {}
    for where, settings in (("public", public), ("protected", protected)):
        unknown = sorted(set(settings) - SCRIPT_SETTINGS[where])
        if unknown:
            problem = f"'{unknown[0]}' is not a {where} setting of the handler"
            break
    else:
        commands = [s["commandToExecute"] for s in (public, protected) if "commandToExecute" in s]
        if len(commands) == 1 and isinstance(commands[0], str) and commands[0].strip():
            return None
        problem = ("commandToExecute is specified in both public and protected settings" if len(commands) == 2
                   else "commandToExecute must be a non-empty string in the public or the protected settings")
    return {"code": "VMExtensionProvisioningError", "message": "VM has reported a failure when processing "
            f"extension '{props['type']}'. Error message: \"Invalid configuration: {problem}\"."}


class Arm:
    def __init__(self, state):
        self.s = state

    def rg_prefix(self):
        return f"/subscriptions/{self.s.subscription}/resourceGroups/{self.s.resource_group}"

    def vm_id(self, name):
        return f"{self.rg_prefix()}/providers/Microsoft.Compute/virtualMachines/{name}"

    def nic_id(self, name):
        return f"{self.rg_prefix()}/providers/Microsoft.Network/networkInterfaces/{name}"

    # ---- NICs ----
    def put_nic(self, name, body, base):
        if not NAME_RE.match(name) or len(name) > 80:
            return err(400, "InvalidResourceName", f"Resource name {name} is invalid.")
        if not isinstance(body, dict) or body.get("location") != self.s.location:
            return err(400, "LocationRequired" if not body.get("location") else "InvalidLocation",
                       f"The location property is required and must be {self.s.location}.")
        props = body.get("properties") or {}
        ipcs = props.get("ipConfigurations")
        if not isinstance(ipcs, list) or not ipcs:
            return err(400, "NetworkInterfaceMustHaveIpConfiguration", "A network interface needs an IP configuration.")
        for ipc in ipcs:
            sub = ((ipc.get("properties") or {}).get("subnet") or {}).get("id", "")
            if not ipc.get("name") or not re.match(r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                                                   r"Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$", sub):
                return err(400, "InvalidResourceReference", f"Resource {sub!r} referenced by the IP configuration "
                           "is not a subnet ID.")
            if sub.split("/")[-1] == "missing":
                return err(404, "InvalidResourceReference", f"Resource {sub} referenced by resource {name} was not "
                           "found.")
        with self.s.lock:
            existing = self.s.nics.get(name.lower())
            nic = {"name": name, "id": self.nic_id(name), "type": "Microsoft.Network/networkInterfaces",
                   "location": self.s.location, "tags": body.get("tags") or {}, "etag": f'W/"{uuid.uuid4()}"',
                   "properties": {"provisioningState": "Succeeded", "resourceGuid": str(uuid.uuid4()),
                                  "ipConfigurations": [dict(ipc, id=f"{self.nic_id(name)}/ipConfigurations/{ipc['name']}",
                                                            properties=dict(ipc.get("properties") or {},
                                                                            privateIPAddress="10.224.0.%d" % (
                                                                                len(self.s.nics) % 250 + 4),
                                                                            provisioningState="Succeeded"))
                                                       for ipc in ipcs],
                                  "enableAcceleratedNetworking": bool(props.get("enableAcceleratedNetworking")),
                                  "enableIPForwarding": bool(props.get("enableIPForwarding")),
                                  "virtualMachine": (existing or {}).get("properties", {}).get("virtualMachine"),
                                  "nicType": "Standard"}}
            if nic["properties"]["virtualMachine"] is None:
                del nic["properties"]["virtualMachine"]
            self.s.nics[name.lower()] = nic
        op = self.s.new_operation()
        return (200 if existing else 201), {"Azure-AsyncOperation": self.op_url(base, op, "Network")}, nic

    def get_nic(self, name):
        with self.s.lock:
            nic = self.s.nics.get(name.lower())
        if not nic:
            return err(404, "NotFound", f"Resource {self.nic_id(name)} not found.")
        return 200, {}, nic

    def delete_nic(self, name, base):
        with self.s.lock:
            nic = self.s.nics.get(name.lower())
            if nic and nic["properties"].get("virtualMachine"):
                return err(400, "NicInUse", f"Network Interface {nic['id']} is used by existing resource "
                           f"{nic['properties']['virtualMachine']['id']}. In order to delete the network interface, "
                           "it must be dissociated from the resource.")
            if not nic:
                return 204, {}, None
            del self.s.nics[name.lower()]
        op = self.s.new_operation()
        return 202, {"Azure-AsyncOperation": self.op_url(base, op, "Network"),
                     "Location": self.op_url(base, op, "Network", results=True)}, None

    def list_nics(self):
        with self.s.lock:
            return 200, {}, {"value": list(self.s.nics.values())}

    # ---- VMs ----
    def validate_vm(self, name, body):
        if not NAME_RE.match(name) or len(name) > 64:
            return err(400, "InvalidResourceName", f"The resource name '{name}' is invalid.")
        if not isinstance(body, dict):
            return err(400, "InvalidRequestContent", "The request content was invalid and could not be deserialized.")
        if body.get("location") != self.s.location:
            return err(400, "LocationRequired" if not body.get("location") else "InvalidLocation",
                       f"The location property is required and must be {self.s.location}.")
        props = body.get("properties")
        if not isinstance(props, dict):
            return err(400, "InvalidRequestContent", "properties is required.")
        unknown = set(props) - VM_PROPERTIES
        if unknown:
            return err(400, "InvalidRequestContent", f"Could not find member '{sorted(unknown)[0]}' on object of type "
                       "'VirtualMachineProperties'.")
        size = (props.get("hardwareProfile") or {}).get("vmSize")
        if size not in self.s.skus:
            return err(400, "InvalidParameter", f"The value {size} provided for the VM size is not valid.")
        sku = self.s.skus[size]
        zones = body.get("zones")
        if zones is not None and (not isinstance(zones, list) or len(zones) != 1 or zones[0] not in ("1", "2", "3")):
            return err(400, "InvalidParameter", "zones must hold one of '1', '2', '3'.")
        priority = props.get("priority", "Regular")
        if priority not in ("Regular", "Spot", "Low"):
            return err(400, "InvalidParameter", f"Priority '{priority}' is not valid.")
        if priority == "Spot":
            if props.get("evictionPolicy") not in ("Delete", "Deallocate"):
                return err(400, "InvalidParameter", "Spot VMs need evictionPolicy Delete or Deallocate.")
            mp = (props.get("billingProfile") or {}).get("maxPrice")
            if not isinstance(mp, (int, float)) or (mp != -1 and mp <= 0):
                return err(400, "InvalidParameter", "billingProfile.maxPrice must be -1 or a positive price.")
        elif "evictionPolicy" in props or "billingProfile" in props:
            return err(400, "InvalidParameter", "evictionPolicy and billingProfile are allowed only on Spot VMs.")
        storage = props.get("storageProfile") or {}
        disk = storage.get("osDisk") or {}
        if disk.get("createOption") != "FromImage":
            return err(400, "InvalidParameter", "storageProfile.osDisk.createOption must be FromImage.")
        if not isinstance(disk.get("diskSizeGB", 30), int) or not 1 <= disk.get("diskSizeGB", 30) <= 4095:
            return err(400, "InvalidParameter", "osDisk.diskSizeGB must be from 1 to 4095.")
        if disk.get("deleteOption", "Detach") not in ("Delete", "Detach"):
            return err(400, "InvalidParameter", "osDisk.deleteOption must be Delete or Detach.")
        image = storage.get("imageReference") or {}
        kinds = [k for k in ("id", "communityGalleryImageId", "sharedGalleryImageId") if image.get(k)]
        marketplace = all(image.get(k) for k in ("publisher", "offer", "sku", "version"))
        if len(kinds) + int(marketplace) != 1:
            return err(400, "InvalidParameter", "imageReference must name exactly one image (id, a gallery image ID "
                       "or publisher/offer/sku/version).")
        cig = image.get("communityGalleryImageId")
        if cig:
            parts = cig.split("/")
            if len(parts) != 7 or parts[1] != "CommunityGalleries" or parts[3] != "images" or \
                    parts[5] != "versions" or not gallery_image_exists(parts[2], parts[4], parts[6]):
                return err(404, "GalleryImageNotFound", f"The gallery image {cig} is not available in "
                           f"{self.s.location} or cannot be found.")
        os_profile = props.get("osProfile") or {}
        if not os_profile.get("computerName") or len(os_profile["computerName"]) > 64 or not os_profile.get(
                "adminUsername"):
            return err(400, "InvalidParameter", "osProfile needs computerName (at most 64 characters) and "
                       "adminUsername.")
        custom = os_profile.get("customData")
        if custom is not None:
            try:
                base64.b64decode(custom, validate=True)
            except ValueError:
                return err(400, "InvalidParameter", "osProfile.customData must be base64.")
            if len(custom) > 87380:
                return err(400, "InvalidParameter", "osProfile.customData is longer than 87380 characters.")
        linux = os_profile.get("linuxConfiguration")
        windows = os_profile.get("windowsConfiguration")
        if linux and not ((linux.get("ssh") or {}).get("publicKeys") or os_profile.get("adminPassword")):
            return err(400, "InvalidParameter", "A Linux VM needs an SSH public key or an admin password.")
        windows_image = image.get("publisher") == "MicrosoftWindowsServer"
        if windows_image and linux:
            return err(409, "OSProvisioningConfigurationMismatch", "linuxConfiguration is not allowed on a VM from a "
                       "Windows image.")
        if windows_image or windows:
            bad = windows_os_profile(os_profile)
            if bad:
                return err(400, "InvalidParameter", bad)
        nics = (props.get("networkProfile") or {}).get("networkInterfaces") or []
        if len(nics) != 1:
            return err(400, "InvalidParameter", "networkProfile.networkInterfaces must hold one interface.")
        nic_name = nics[0].get("id", "").split("/")[-1]
        with self.s.lock:
            nic = self.s.nics.get(nic_name.lower())
        if not nic or nic["id"].lower() != nics[0].get("id", "").lower():
            return err(400, "InvalidResourceReference", f"Resource {nics[0].get('id')} referenced by resource "
                       f"{self.vm_id(name)} was not found.")
        tags = body.get("tags") or {}
        if len(tags) > 50 or any(len(k) > 512 or len(str(v)) > 256 for k, v in tags.items()):
            return err(400, "InvalidTag", "At most 50 tags, names up to 512 and values up to 256 characters.")
        if emu_catalog.location_restricted(sku):
            return err(409, "SkuNotAvailable", f"The requested VM size for resource 'Following SKUs have failed for "
                       f"Capacity Restrictions: {size}' is currently not available in location "
                       f"'{self.s.location}'. Please try another size or deploy to a different location or different "
                       "zone.")
        if zones and zones[0] not in emu_catalog.usable_zones(sku):
            return err(409, "SkuNotAvailable", f"The requested VM size {size} is currently not available in location "
                       f"'{self.s.location}' zones '{zones[0]}'.")
        if priority == "Spot" and any(c["name"] == "LowPriorityCapable" and c["value"] == "False"
                                      for c in sku["capabilities"]):
            return err(400, "SkuNotSupportedForSpot", f"VM size {size} does not support Spot.")
        return None

    def shortage(self, size, zone, priority):
        for key in ((size, zone or "", priority), (size, "", priority)):
            if key in self.s.shortages:
                return self.s.shortages_code.get(key, "ZonalAllocationFailed" if zone else "AllocationFailed")
        return None

    def put_vm(self, name, body, base, fault):
        bad = self.validate_vm(name, body)
        if bad:
            return bad
        props = body["properties"]
        size = props["hardwareProfile"]["vmSize"]
        zone = (body.get("zones") or [""])[0]
        priority = props.get("priority", "Regular")
        with self.s.lock:
            existing = self.s.vms.get(name.lower())
            if existing and existing["properties"]["provisioningState"] != "Failed":
                if (existing.get("zones") or [""])[0] != zone or existing["properties"].get("priority") != priority:
                    return err(409, "PropertyChangeNotAllowed", "Changing property 'zones' or 'priority' is not "
                               "allowed.")
            code = self.shortage(size, zone, "spot" if priority == "Spot" else "on-demand")
        if code in ("QuotaExceeded", "OperationNotAllowed", "SkuNotAvailable", "OverconstrainedAllocationRequest"):
            family = self.s.skus[size]["family"]
            quota = "LowPriorityCores" if priority == "Spot" else family + " Cores"
            text = {"QuotaExceeded": f"Operation could not be completed as it results in exceeding approved {quota} "
                                     f"quota. Location: {self.s.location}, Current Limit: 10, Current Usage: 10, "
                                     "Additional Required: 2.",
                    "OperationNotAllowed": f"Operation could not be completed as it results in exceeding approved "
                                           f"{quota} quota. Location: {self.s.location}, Current Limit: 10.",
                    "SkuNotAvailable": f"The requested VM size {size} is currently not available in location "
                                       f"'{self.s.location}'.",
                    "OverconstrainedAllocationRequest": "Allocation failed. VM(s) with the following constraints "
                                                        "cannot be allocated, because the condition is too "
                                                        f"restrictive: {size}, zone {zone}."}[code]
            return err(409, code, text)
        if fault is not None and fault.kind == "allocation":
            code = "ZonalAllocationFailed" if zone else "AllocationFailed"
        error = None
        if code:
            error = {"code": code, "message": f"Allocation failed. We do not have sufficient capacity for the "
                                              f"requested VM size {size} in this {'zone' if zone else 'region'}."}
        nic_name = props["networkProfile"]["networkInterfaces"][0]["id"].split("/")[-1]
        now = time.time()
        vm = {"name": name, "id": self.vm_id(name), "type": "Microsoft.Compute/virtualMachines",
              "location": self.s.location, "tags": body.get("tags") or {}, "zones": body.get("zones"),
              "properties": {"vmId": str(uuid.uuid4()), "hardwareProfile": {"vmSize": size},
                             "storageProfile": self.storage_out(name, props["storageProfile"]),
                             "osProfile": {k: v for k, v in props["osProfile"].items()
                                           if k not in ("customData", "adminPassword")},
                             "networkProfile": props["networkProfile"], "priority": priority,
                             "provisioningState": "Creating", "timeCreated": iso(now)}}
        for k in ("evictionPolicy", "billingProfile", "securityProfile", "additionalCapabilities", "userData"):
            if k in props:
                vm["properties"][k] = props[k]
        if vm["zones"] is None:
            del vm["zones"]
        vm["_power"] = "PowerState/starting"
        vm["_custom_data"] = props["osProfile"].get("customData")

        def done():
            cur = self.s.vms.get(name.lower())
            if cur is not vm:
                return
            self.s.history.append({"event": "failed" if error else "created", "name": name, "tags": vm["tags"],
                                   "size": size, "zone": zone, "priority": priority,
                                   "vm": copy.deepcopy(self.public_vm(vm))})
            if error:
                vm["properties"]["provisioningState"] = "Failed"
                vm["_power"] = "PowerState/deallocated"
            else:
                vm["properties"]["provisioningState"] = "Succeeded"
                vm["_power"] = "PowerState/running"
        with self.s.lock:
            if existing and existing["properties"]["provisioningState"] == "Succeeded" and not error:
                existing["tags"] = vm["tags"]
                existing["properties"]["hardwareProfile"] = vm["properties"]["hardwareProfile"]
                self.s.vm_puts[name.lower()] = self.s.vm_puts.get(name.lower(), 0) + 1
                return 200, {}, self.public_vm(existing)
            self.s.vms[name.lower()] = vm
            self.s.vm_puts[name.lower()] = self.s.vm_puts.get(name.lower(), 0) + 1
            nic = self.s.nics.get(nic_name.lower())
            if nic:
                nic["properties"]["virtualMachine"] = {"id": vm["id"]}
        op = self.s.new_operation(error=error, on_done=done)
        return 201, {"Azure-AsyncOperation": self.op_url(base, op, "Compute")}, self.public_vm(vm)

    def storage_out(self, name, storage):
        disk = dict(storage["osDisk"])
        disk.setdefault("name", f"{name}_OsDisk_1_{uuid.uuid4().hex}")
        disk.setdefault("caching", "ReadWrite")
        disk["osType"] = "Windows" if "windows" in str(storage.get("imageReference")).lower() else "Linux"
        disk["managedDisk"] = dict(disk.get("managedDisk") or {"storageAccountType": "Premium_LRS"},
                                   id=f"{self.rg_prefix()}/providers/Microsoft.Compute/disks/{disk['name']}")
        return {"imageReference": storage["imageReference"], "osDisk": disk, "dataDisks": []}

    def public_vm(self, vm, expand=False):
        out = {k: v for k, v in vm.items() if not k.startswith("_")}
        if expand:
            out = dict(out, properties=dict(out["properties"], instanceView=self.instance_view_of(vm)))
        return out

    def instance_view_of(self, vm):
        now = iso(time.time())
        state = vm["properties"]["provisioningState"]
        view = {"computerName": vm["properties"]["osProfile"]["computerName"],
                "statuses": [{"code": f"ProvisioningState/{state.lower()}", "level": "Info",
                              "displayStatus": f"Provisioning {state.lower()}", "time": now},
                             {"code": vm["_power"], "level": "Info",
                              "displayStatus": "VM " + vm["_power"].split("/")[1]}]}
        if vm.get("_maintenance"):
            view["maintenanceRedeployStatus"] = vm["_maintenance"]
        return view

    def get_vm(self, name, expand=False):
        with self.s.lock:
            vm = self.s.vms.get(name.lower())
            if not vm:
                return err(404, "ResourceNotFound", f"The Resource 'Microsoft.Compute/virtualMachines/{name}' under "
                           f"resource group '{self.s.resource_group}' was not found.")
            return 200, {}, self.public_vm(vm, expand)

    def instance_view(self, name):
        with self.s.lock:
            vm = self.s.vms.get(name.lower())
            if not vm:
                return err(404, "ResourceNotFound", f"The Resource 'Microsoft.Compute/virtualMachines/{name}' under "
                           f"resource group '{self.s.resource_group}' was not found.")
            return 200, {}, self.instance_view_of(vm)

    def list_vms(self, base, query):
        expand = query.get("$expand") == "instanceView"
        with self.s.lock:
            vms = sorted(self.s.vms.values(), key=lambda v: v["name"])
            start = int(query.get("$skiptoken", "0") or 0)
            page = [self.public_vm(v, expand) for v in vms[start:start + 10]]
        out = {"value": page}
        if start + 10 < len(vms):
            out["nextLink"] = (f"{base}{self.rg_prefix()}/providers/Microsoft.Compute/virtualMachines?"
                               f"api-version={query['api-version']}&$skiptoken={start + 10}"
                               + ("&$expand=instanceView" if expand else ""))
        return 200, {}, out

    def delete_vm(self, name, base):
        with self.s.lock:
            vm = self.s.vms.get(name.lower())
            if not vm:
                return 204, {}, None
            vm["properties"]["provisioningState"] = "Deleting"
            vm["_power"] = "PowerState/stopping"

        def done():
            if self.s.vms.get(name.lower()) is not vm:
                return
            self.s.history.append({"event": "deleted", "name": name, "tags": vm["tags"]})
            del self.s.vms[name.lower()]
            self.s.health.pop(name.lower(), None)
            for ref in vm["properties"]["networkProfile"]["networkInterfaces"]:
                nic = self.s.nics.get(ref["id"].split("/")[-1].lower())
                if nic is None:
                    continue
                nic["properties"].pop("virtualMachine", None)
                option = (ref.get("properties") or {}).get("deleteOption", "Detach")
                if option == "Delete":
                    del self.s.nics[ref["id"].split("/")[-1].lower()]
        op = self.s.new_operation(on_done=done)
        return 202, {"Azure-AsyncOperation": self.op_url(base, op, "Compute"),
                     "Location": self.op_url(base, op, "Compute", results=True), "Retry-After": "0"}, None

    # ---- operations ----
    def op_url(self, base, op_id, provider, results=False):
        kind = "operationResults" if results else "operations"
        return (f"{base}/subscriptions/{self.s.subscription}/providers/Microsoft.{provider}/locations/"
                f"{self.s.location}/{kind}/{op_id}?api-version=2024-07-01")

    def operation(self, op_id, results):
        polled = self.s.poll_operation(op_id)
        if polled is None:
            return err(404, "NotFound", f"Operation {op_id} not found.")
        status, error = polled
        if results:
            if status == "InProgress":
                return 202, {"Retry-After": "0"}, None
            return (200, {}, None) if status == "Succeeded" else err(200, error["code"], error["message"])
        body = {"name": op_id, "status": status, "startTime": iso(time.time())}
        if status != "InProgress":
            body["endTime"] = iso(time.time())
        if error:
            body["error"] = error
        return 200, ({"Retry-After": "0"} if status == "InProgress" else {}), body

    # ---- VM extensions ----
    def put_extension(self, vm_name, name, body, base):
        with self.s.lock:
            vm = self.s.vms.get(vm_name.lower())
        if vm is None:
            return err(404, "ParentResourceNotFound", f"Can not perform requested operation on nested resource. "
                       f"Parent resource '{vm_name}' not found.")
        if not isinstance(body, dict) or body.get("location") != self.s.location:
            return err(400, "LocationRequired" if not (body or {}).get("location") else "InvalidLocation",
                       f"The location property is required and must be {self.s.location}.")
        props = body.get("properties") or {}
        for key in ("publisher", "type", "typeHandlerVersion"):
            if not isinstance(props.get(key), str) or not props[key]:
                return err(400, "InvalidParameter", f"Required parameter '{key}' is missing (null).")
        if not re.fullmatch(r"\d+\.\d+", props["typeHandlerVersion"]):
            return err(400, "InvalidParameter", f"typeHandlerVersion '{props['typeHandlerVersion']}' is not "
                       "major.minor.")
        for key in ("settings", "protectedSettings"):
            if key in props and not isinstance(props[key], dict):
                return err(400, "InvalidParameter", f"{key} must be an object.")
        unknown = set(props) - {"publisher", "type", "typeHandlerVersion", "autoUpgradeMinorVersion", "settings",
                                "protectedSettings", "enableAutomaticUpgrade", "suppressFailures",
                                "forceUpdateTag", "provisionAfterExtensions"}
        if unknown:
            return err(400, "InvalidRequestContent", f"Could not find member '{sorted(unknown)[0]}' on object of type "
                       "'VirtualMachineExtensionProperties'.")
        os_type = vm["properties"]["storageProfile"]["osDisk"]["osType"]
        handler_os = {("Microsoft.Compute", "CustomScriptExtension"): "Windows",
                      ("Microsoft.Azure.Extensions", "CustomScript"): "Linux"}.get((props["publisher"], props["type"]))
        error = None
        if handler_os and handler_os != os_type:
            error = {"code": "VMExtensionHandlerNonTransientError", "message": f"The handler for VM extension type "
                     f"'{props['publisher']}.{props['type']}' has reported terminal failure: it does not support "
                     f"{os_type}."}
        elif handler_os:
            error = script_handler_error(props)
        ext = {"name": name, "id": f"{self.vm_id(vm_name)}/extensions/{name}",
               "type": "Microsoft.Compute/virtualMachines/extensions", "location": self.s.location,
               "tags": body.get("tags") or {},
               "properties": dict({k: v for k, v in props.items() if k != "protectedSettings"},
                                  provisioningState="Creating")}

        def done():
            ext["properties"]["provisioningState"] = "Failed" if error else "Succeeded"
        with self.s.lock:
            existed = name.lower() in vm.setdefault("_extensions", {})
            vm["_extensions"][name.lower()] = ext
            # the body as sent, for tests comparing what two clients put (ARM never returns protectedSettings)
            vm.setdefault("_ext_requests", {})[name.lower()] = body
            self.s.history.append({"event": "extension", "vm": vm_name, "name": name, "body": body})
        op = self.s.new_operation(error=error, on_done=done)
        return (200 if existed else 201), {"Azure-AsyncOperation": self.op_url(base, op, "Compute")}, ext

    def get_extension(self, vm_name, name):
        with self.s.lock:
            vm = self.s.vms.get(vm_name.lower())
            ext = (vm or {}).get("_extensions", {}).get(name.lower())
        if ext is None:
            return err(404, "NotFound", f"The entity was not found in this Azure location.")
        return 200, {}, ext

    def list_extensions(self, vm_name):
        with self.s.lock:
            vm = self.s.vms.get(vm_name.lower())
            if vm is None:
                return err(404, "ResourceNotFound", f"The Resource 'Microsoft.Compute/virtualMachines/{vm_name}' "
                           f"under resource group '{self.s.resource_group}' was not found.")
            return 200, {}, {"value": list(vm.get("_extensions", {}).values())}

    # ---- subnets and node images (read only) ----
    def get_subnet(self, group, vnet, name):
        sid = (f"/subscriptions/{self.s.subscription}/resourceGroups/{group}/providers/Microsoft.Network/"
               f"virtualNetworks/{vnet}/subnets/{name}")
        if name.lower() == "missing":
            return err(404, "NotFound", f"Resource {sid} not found.")
        return 200, {}, {"id": sid, "name": name, "type": "Microsoft.Network/virtualNetworks/subnets",
                         "etag": f'W/"{uuid.uuid4()}"',
                         "properties": {"addressPrefix": "10.224.0.0/16", "provisioningState": "Succeeded",
                                        "privateEndpointNetworkPolicies": "Disabled",
                                        "privateLinkServiceNetworkPolicies": "Enabled"}}

    def get_gallery_version(self, location, gallery, image, version):
        if location.lower() != self.s.location or not gallery_image_exists(gallery, image, version):
            return err(404, "ResourceNotFound", f"The Resource 'Microsoft.Compute/locations/{location}/"
                       f"communityGalleries/{gallery}/images/{image}/versions/{version}' was not found.")
        return 200, {}, {"name": version, "location": self.s.location,
                         "type": "Microsoft.Compute/locations/communityGalleries/images/versions",
                         "identifier": {"uniqueId": f"/CommunityGalleries/{gallery}/Images/{image}/Versions/{version}"},
                         "properties": {"publishedDate": "2025-11-07T00:00:00+00:00", "excludeFromLatest": False,
                                        "storageProfile": {"osDiskImage": {"diskSizeGB": 30,
                                                                           "hostCaching": "ReadOnly"}}}}

    # ---- health ----
    def list_health(self):
        with self.s.lock:
            records = [r for rs in self.s.health.values() for r in rs]
        return 200, {}, {"value": records}

    def inject_event(self, spec):
        """kind: preempt | degraded | maintenance | stopping | deleting, for the VM `vm`, with deadline_ms."""
        name, kind = spec["vm"].lower(), spec["kind"]
        deadline = spec.get("deadline_ms") or int(time.time() * 1000) + 30000
        with self.s.lock:
            vm = self.s.vms.get(name)
            if vm is None:
                return err(404, "NotFound", f"no VM {name}")
            if kind in ("preempt", "degraded"):
                occurred = (deadline - 30000) / 1000 if kind == "preempt" else time.time()
                event = "VirtualMachinePreempted" if kind == "preempt" else \
                    "VirtualMachinePossiblyDegradedDueToHardwareFailure"
                self.s.health.setdefault(name, []).append({
                    "id": vm["id"] + "/providers/Microsoft.ResourceHealth/availabilityStatuses/current",
                    "name": "current", "type": "Microsoft.ResourceHealth/AvailabilityStatuses",
                    "location": self.s.location,
                    "properties": {"availabilityState": "Unavailable" if kind == "preempt" else "Degraded",
                                   "title": event, "summary": "injected by the emulator", "reasonType": "Planned"
                                   if kind == "preempt" else "Unplanned", "context": "Platform Initiated",
                                   "category": "Planned" if kind == "preempt" else "Unplanned",
                                   "healthEventType": event, "occuredTime": iso(occurred),
                                   "reportedTime": iso(time.time())}})
            elif kind == "maintenance":
                start = deadline / 1000
                vm["_maintenance"] = {"isCustomerInitiatedMaintenanceAllowed": True,
                                      "preMaintenanceWindowStartTime": iso(time.time()),
                                      "preMaintenanceWindowEndTime": iso(start),
                                      "maintenanceWindowStartTime": iso(start),
                                      "maintenanceWindowEndTime": iso(start + 3600)}
            elif kind == "stopping":
                vm["_power"] = "PowerState/deallocating"
            elif kind == "deleting":
                vm["properties"]["provisioningState"] = "Deleting"
            else:
                return err(400, "InvalidEvent", f"unknown event kind {kind}")
        return 200, {}, {}
