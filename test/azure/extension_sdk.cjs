// The Custom Script Extension azure.so put on a Windows node's VM, checked with Microsoft's @azure/arm-compute:
// read back through VirtualMachineExtensions.get it must have the shape the SDK and ARM expect (publisher
// Microsoft.Compute, type CustomScriptExtension, a major.minor handler version, public settings an object, the
// command in the protected settings, which ARM never returns), and the SDK's createOrUpdate of that same extension
// must send exactly the body azure.so sent (both bodies as the emulator received them). The handler's own rules
// (one command, in one of the two settings) are checked by putting variants through the SDK, and the VM it runs on
// is read through the SDK too (the VM agent on, a computer name Windows accepts, no password returned).
// Run by test_extension_sdk.c while the VM lives: node extension_sdk.cjs VM_NAME (under test/azure/with_emulator.py).
"use strict";
const assert = require("node:assert/strict");
const { ClientSecretCredential } = require("@azure/identity");
const { ComputeManagementClient } = require("@azure/arm-compute");

const url = process.env.AZURE_EMULATOR_URL;
const rg = process.env.AZURE_NODE_RESOURCE_GROUP;
const location = process.env.LOCATION;
const vmName = process.argv[2];
const CSE = "windows-cse-agent-karpenter";

async function sentBodies() {
  const res = await fetch(`${url}/_emulator/state`);
  assert.equal(res.status, 200, "emulator state");
  const vm = (await res.json()).vms.find((v) => v.name === vmName);
  assert.ok(vm, `no VM ${vmName} in the emulator`);
  return Object.fromEntries(vm.extensions.map((e) => [e.name, e.request]));
}

function client() {
  const credential = new ClientSecretCredential(process.env.AZURE_TENANT_ID, process.env.AZURE_CLIENT_ID,
    process.env.AZURE_CLIENT_SECRET, { authorityHost: url, disableInstanceDiscovery: true });
  return new ComputeManagementClient(credential, process.env.AZURE_SUBSCRIPTION_ID,
    { endpoint: url, credentials: { scopes: ["https://management.azure.com/.default"] } });
}

// The extension as azure.so left it, through the SDK's model.
function checkModel(ext) {
  assert.equal(ext.name, CSE);
  assert.equal(ext.location, location);
  assert.match(ext.id, new RegExp(`/virtualMachines/${vmName}/extensions/${CSE}$`));
  assert.equal(ext.publisher, "Microsoft.Compute");
  assert.equal(ext.typePropertiesType, "CustomScriptExtension");
  assert.match(ext.typeHandlerVersion, /^\d+\.\d+$/, "ARM takes major.minor");
  assert.equal(ext.typeHandlerVersion, "1.10", "AKS's Windows CSE version");
  assert.equal(ext.autoUpgradeMinorVersion, true);
  assert.deepEqual(ext.settings, {}, "nothing public: the command is protected");
  assert.equal(ext.protectedSettings, undefined, "ARM never returns protectedSettings");
  // azure.so does not wait for the bootstrap (minutes on Windows): the extension may still be running
  assert.ok(["Creating", "Succeeded"].includes(ext.provisioningState), ext.provisioningState);
  assert.equal(ext.tags["karpenter.azure.com_cluster"], "demo");
}

// The VM the extension runs on, through the SDK's model: the extension needs the VM agent, and Windows' 15
// characters bound the computer name (the node's name).
async function checkVm(compute) {
  const vm = await compute.virtualMachines.get(rg, vmName);
  assert.equal(vm.storageProfile.osDisk.osType, "Windows");
  assert.equal(vm.osProfile.windowsConfiguration.provisionVMAgent, true, "extensions run through the VM agent");
  assert.match(vm.osProfile.computerName, /^aks[0-9a-f]{12}$/);
  assert.equal(vm.osProfile.adminPassword, undefined, "ARM never returns the password");
  assert.equal(vm.osProfile.linuxConfiguration, undefined);
}

async function main() {
  const compute = client();
  await checkVm(compute);
  const ext = await compute.virtualMachineExtensions.get(rg, vmName, CSE);
  checkModel(ext);
  const sent = (await sentBodies())[CSE];
  const command = sent.properties.protectedSettings.commandToExecute;
  assert.match(command, /^powershell\.exe .*AzureData\\CustomData\.bin.*-CSEResultFilePath/);

  // The SDK puts what it read back plus the protected settings: its body must be azure.so's, key for key.
  const { id, name, type, provisioningState, ...model } = ext;
  const put = await compute.virtualMachineExtensions.createOrUpdate(rg, vmName, "sdk-cse",
    { ...model, protectedSettings: { commandToExecute: command } });
  assert.equal(put.provisioningState, "Succeeded");
  assert.deepEqual((await sentBodies())["sdk-cse"], sent, "the SDK's body for the same extension");

  // The handler's rules, through the SDK: the command in both settings, or in neither, fails the extension.
  await assert.rejects(compute.virtualMachineExtensions.createOrUpdate(rg, vmName, "sdk-both",
    { ...model, settings: { commandToExecute: command }, protectedSettings: { commandToExecute: command } }),
    (e) => /VMExtensionProvisioningError/.test(`${e.code} ${e.message}`) && /both/.test(e.message));
  await assert.rejects(compute.virtualMachineExtensions.createOrUpdate(rg, vmName, "sdk-none", model),
    (e) => /VMExtensionProvisioningError/.test(`${e.code} ${e.message}`));
  const listed = await compute.virtualMachineExtensions.list(rg, vmName);
  assert.deepEqual(listed.value.map((e) => e.name).sort(), ["sdk-both", "sdk-cse", "sdk-none", CSE]);
  console.log(`${vmName}: ${CSE} as @azure/arm-compute reads and writes it (${ext.publisher}.` +
    `${ext.typePropertiesType} ${ext.typeHandlerVersion})`);
}

main().catch((e) => { console.error(e); process.exit(1); });
