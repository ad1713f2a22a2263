// The Azure emulator checked with Microsoft's official JavaScript SDKs (@azure/identity, @azure/arm-compute,
// @azure/arm-network, @azure/arm-resourcehealth): their token requests, ARM calls and long-running-operation polling must work against it and
// its answers must deserialize as Azure's do. Run under test/azure/with_emulator.py (AZURE_EMULATOR_URL, the CA in
// NODE_EXTRA_CA_CERTS); the SDKs come from NODE_PATH (scripts/install-test-npm.sh).
"use strict";
for (const m of ["@azure/identity", "@azure/arm-compute", "@azure/arm-network", "@azure/arm-resourcehealth"]) {
  try { require.resolve(m); } catch (e) {
    console.error(`${m} is not installed: run scripts/npm-deps.sh test/emulators/azure azure (scripts/install-deps.sh does)`);
    process.exit(1);
  }
}
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { ClientSecretCredential, WorkloadIdentityCredential, ManagedIdentityCredential } = require("@azure/identity");
const { ComputeManagementClient } = require("@azure/arm-compute");
const { NetworkManagementClient } = require("@azure/arm-network");
const { MicrosoftResourceHealth } = require("@azure/arm-resourcehealth");

const url = process.env.AZURE_EMULATOR_URL;
const sub = process.env.AZURE_SUBSCRIPTION_ID;
const rg = process.env.AZURE_NODE_RESOURCE_GROUP;
const tenant = process.env.AZURE_TENANT_ID;
const clientId = process.env.AZURE_CLIENT_ID;
const location = "southcentralus";
const subnet = process.env.VNET_SUBNET_ID;

async function control(what, body) {
  const res = await fetch(`${url}/_emulator/${what}`, body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(res.status, 200, `control ${what}`);
  return res.json();
}

async function tokens() {
  const options = { authorityHost: url, disableInstanceDiscovery: true };
  const secret = new ClientSecretCredential(tenant, clientId, process.env.AZURE_CLIENT_SECRET, options);
  const t = await secret.getToken("https://management.azure.com/.default");
  assert.ok(t.token.startsWith("emu.") && t.expiresOnTimestamp > Date.now(), "client secret token");
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "azsdk-")), "token");
  fs.writeFileSync(file, "eyJhbGciOiJSUzI1NiJ9.emulator.projected");
  const wi = new WorkloadIdentityCredential({ tenantId: tenant, clientId, tokenFilePath: file, ...options });
  assert.ok((await wi.getToken("https://management.azure.com/.default")).token.startsWith("emu."), "workload");
  process.env.AZURE_POD_IDENTITY_AUTHORITY_HOST = process.env.AZURE_EMULATOR_IMDS;
  const mi = new ManagedIdentityCredential({ clientId });
  assert.ok((await mi.getToken("https://management.azure.com/.default")).token.startsWith("emu."), "IMDS");
  const wrong = new ClientSecretCredential(tenant, clientId, "wrong-secret", options);
  await assert.rejects(wrong.getToken("https://management.azure.com/.default"), /AADSTS7000215/);
  return secret;
}

async function rawChecks(token) {
  const base = `${url}/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachines`;
  let res = await fetch(`${base}?api-version=2024-07-01`);
  assert.equal(res.status, 401, "no bearer token");
  res = await fetch(`${base}?api-version=1999-01-01`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal((await res.json()).error.code, "InvalidApiVersionParameter");
  res = await fetch(base, { headers: { authorization: `Bearer ${token}` } });
  assert.equal((await res.json()).error.code, "MissingApiVersionParameter");
  res = await fetch(`${base}/x?api-version=2024-07-01`, { method: "PUT", body: JSON.stringify({ location }),
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
  assert.equal(res.status, 400, "a VM without properties");
}

function vmBody(nicId, extra) {
  return {
    location, zones: ["1"], tags: { "karpenter.azure.com_cluster": "sdk" },
    hardwareProfile: { vmSize: "Standard_D2s_v3" },
    storageProfile: {
      imageReference: { communityGalleryImageId: "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions/202511.07.0" },
      osDisk: { createOption: "FromImage", deleteOption: "Delete", diskSizeGB: 64 },
    },
    osProfile: { computerName: "sdk-vm", adminUsername: "azureuser", customData: Buffer.from("#!/bin/sh\n").toString("base64"),
      linuxConfiguration: { disablePasswordAuthentication: true,
        ssh: { publicKeys: [{ path: "/home/azureuser/.ssh/authorized_keys", keyData: "ssh-ed25519 AAAA sdk" }] } } },
    networkProfile: { networkInterfaces: [{ id: nicId, primary: true, deleteOption: "Delete" }] },
    priority: "Spot", evictionPolicy: "Delete", billingProfile: { maxPrice: -1 },
    ...extra,
  };
}

// The availability statuses azure.so polls (azure_events.c reads id, properties.healthEventType or title, and
// properties.occuredTime, Azure's own spelling) as the Resource Health SDK reads them: listed for the resource group at
// the SDK's api-version (azure.so's AZ_API_HEALTH), the fields deserialized from the wire names azure.so reads, the
// times dates.
async function healthChecks(credential, scope) {
  const health = new MicrosoftResourceHealth(credential, sub, { endpoint: url, credentialScopes: [scope] });
  const deadline = Date.now() + 60000;
  await control("events", { vm: "sdk-vm", kind: "preempt", deadline_ms: deadline });
  const statuses = [];
  for await (const st of health.availabilityStatuses.listByResourceGroup(rg)) statuses.push(st);
  const st = statuses.find((x) => /\/virtualMachines\/sdk-vm\/providers\/Microsoft\.ResourceHealth\//i.test(x.id));
  assert.ok(st, `no availability status for sdk-vm among ${statuses.length}`);
  assert.equal(st.name, "current");
  assert.equal(st.type, "Microsoft.ResourceHealth/AvailabilityStatuses");
  const p = st.properties;
  assert.equal(p.availabilityState, "Unavailable");
  assert.equal(p.title, "VirtualMachinePreempted");
  assert.equal(p.healthEventType, "VirtualMachinePreempted");
  assert.equal(p.reasonType, "Planned");
  assert.ok(p.occuredTime instanceof Date, "occuredTime deserializes as a date");
  assert.equal(p.occuredTime.getTime(), Math.floor((deadline - 30000) / 1000) * 1000);
  assert.ok(p.reportedTime instanceof Date, "reportedTime deserializes as a date");
  await control("clear", {});
}

async function main() {
  const credential = await tokens();
  await rawChecks((await credential.getToken("https://management.azure.com/.default")).token);
  // The SDKs would derive the token's scope from the endpoint; ARM's is management.azure.com wherever it is served.
  const scope = "https://management.azure.com/.default";
  const compute = new ComputeManagementClient(credential, sub, { endpoint: url, credentials: { scopes: [scope] } });
  const network = new NetworkManagementClient(credential, sub, { endpoint: url, credentialScopes: [scope] });

  const skus = [];
  for await (const s of compute.resourceSkus.list({ filter: `location eq '${location}'` })) skus.push(s);
  const vmSkus = skus.filter((s) => s.resourceType === "virtualMachines");
  assert.ok(vmSkus.length >= 18, `${vmSkus.length} VM SKUs through nextLink pages`);
  const d2v2 = vmSkus.find((s) => s.name === "Standard_D2_v2");
  assert.deepEqual(d2v2.restrictions[0].restrictionInfo.zones, ["3"]);
  assert.ok(d2v2.capabilities.some((c) => c.name === "vCPUs" && c.value === "2"));

  const nic = await network.networkInterfaces.beginCreateOrUpdateAndWait(rg, "sdk-nic", {
    location, tags: { "karpenter.azure.com_cluster": "sdk" },
    ipConfigurations: [{ name: "ipconfig1", subnet: { id: subnet }, primary: true }] });
  assert.equal(nic.provisioningState, "Succeeded");

  const vm = await compute.virtualMachines.createOrUpdate(rg, "sdk-vm", vmBody(nic.id));
  assert.equal(vm.provisioningState, "Succeeded", "the LRO ends with the VM's final GET");
  assert.equal(vm.priority, "Spot");
  assert.deepEqual(vm.zones, ["1"]);
  const view = await compute.virtualMachines.instanceView(rg, "sdk-vm");
  assert.ok(view.statuses.some((s) => s.code === "PowerState/running"));
  const listed = [];
  for await (const v of compute.virtualMachines.list(rg, { expand: "instanceView" })) listed.push(v);
  assert.ok(listed.some((v) => v.name === "sdk-vm" && v.instanceView && v.instanceView.statuses.length));

  await healthChecks(credential, scope);

  await control("faults", { kind: "capacity", sku: "Standard_D4s_v3", zone: "2", capacity_type: "on-demand" });
  const nic2 = await network.networkInterfaces.beginCreateOrUpdateAndWait(rg, "sdk-nic2", {
    location, ipConfigurations: [{ name: "ipconfig1", subnet: { id: subnet } }] });
  const body = vmBody(nic2.id, { zones: ["2"], hardwareProfile: { vmSize: "Standard_D4s_v3" }, priority: "Regular",
    evictionPolicy: undefined, billingProfile: undefined });
  body.osProfile.computerName = "sdk-vm2";
  await assert.rejects(compute.virtualMachines.createOrUpdate(rg, "sdk-vm2", body),
    (e) => /ZonalAllocationFailed/.test(`${e.code} ${e.message}`));
  await control("clear", {});
  await compute.virtualMachines.delete(rg, "sdk-vm2");

  await compute.virtualMachines.delete(rg, "sdk-vm");
  await assert.rejects(compute.virtualMachines.get(rg, "sdk-vm"), (e) => e.statusCode === 404);
  await assert.rejects(network.networkInterfaces.get(rg, "sdk-nic"), (e) => e.statusCode === 404,
    "the NIC went with the VM (deleteOption Delete)");
  const state = await control("state");
  for (const [op, versions] of Object.entries(state.api_versions)) console.log(`${op}: ${versions.join(", ")}`);
  console.log("azure emulator: the official SDKs agree with it");
}

main().catch((e) => { console.error(e); process.exit(1); });
