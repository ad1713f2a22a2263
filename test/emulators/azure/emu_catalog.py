"""Resource SKUs and Retail Prices built from the shared data directory (azure-skus.json, azure-prices-ondemand.json).

The SKU records are the reference port's fixture converted back to the Resource SKUs API shape; the emulator adds a
zone restriction (Standard_D2_v2 is not offered to the subscription in zone 3) and a location restriction
(Standard_A0) so that filtering is exercised, plus one disk SKU that a VM catalog must skip. Spot prices, which the
data lacks, are a fixed 20-30 % of on-demand per SKU."""
import json
import os
import zlib

PAGE = 8


def _cap_value(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def load_skus(data_dir, location):
    with open(os.path.join(data_dir, "azure-skus.json")) as f:
        records = [r for r in json.load(f) if r["region"] == location]
    if not records:
        raise SystemExit(f"azure emulator: no SKU of {location} in azure-skus.json")
    skus = {}
    for r in records:
        restrictions = []
        for x in r["restrictions"]:
            restrictions.append({"type": x["type"], "values": x["values"], "reasonCode": x["reason_code"],
                                 "restrictionInfo": {"locations": [location]}})
        if r["name"] == "Standard_D2_v2" and "3" in r["zones"]:
            restrictions.append({"type": "Zone", "values": [location], "reasonCode": "NotAvailableForSubscription",
                                 "restrictionInfo": {"locations": [location], "zones": ["3"]}})
        if r["name"] == "Standard_A0":
            restrictions.append({"type": "Location", "values": [location], "reasonCode": "NotAvailableForSubscription",
                                 "restrictionInfo": {"locations": [location]}})
        skus[r["name"]] = {
            "resourceType": "virtualMachines", "name": r["name"], "tier": r["tier"], "size": r["size"],
            "family": r["family"], "locations": [location],
            "locationInfo": [{"location": location, "zones": sorted(r["zones"]), "zoneDetails": []}],
            "capabilities": [{"name": k, "value": _cap_value(v)} for k, v in r["capabilities"].items()],
            "restrictions": restrictions,
        }
    return skus


def usable_zones(sku):
    zones = set(sku["locationInfo"][0]["zones"])
    for r in sku["restrictions"]:
        if r["type"] == "Zone":
            zones -= set(r["restrictionInfo"].get("zones", []))
    return zones


def location_restricted(sku):
    return any(r["type"] == "Location" for r in sku["restrictions"])


def sku_pages(state, base, query):
    """The Resource SKUs list, paged with nextLink (skipToken = the index of the page's first record)."""
    records = list(state.skus.values()) + [{
        "resourceType": "disks", "name": "Premium_LRS", "tier": "Premium", "size": "P1", "family": "PremiumFamily",
        "locations": [state.location], "locationInfo": [{"location": state.location, "zones": ["1", "2", "3"]}],
        "capabilities": [{"name": "MaxSizeGiB", "value": "4"}], "restrictions": []}]
    start = int(query.get("$skipToken", "0") or 0)
    page = records[start:start + PAGE]
    out = {"value": page}
    if start + PAGE < len(records):
        filt = query.get("$filter", "")
        out["nextLink"] = (f"{base}/subscriptions/{state.subscription}/providers/Microsoft.Compute/skus?"
                           f"api-version={query['api-version']}&$skipToken={start + PAGE}"
                           + (f"&$filter={filt.replace(' ', '%20').replace(chr(39), '%27')}" if filt else ""))
    return out


def load_prices(data_dir, location):
    with open(os.path.join(data_dir, "azure-prices-ondemand.json")) as f:
        table = json.load(f).get(location, {})
    return {k: v for k, v in table.items() if k.startswith("Standard_") or k.startswith("Basic_")}


def spot_price(name, on_demand):
    return round(on_demand * (0.2 + (zlib.crc32(name.encode()) % 100) / 1000), 6)


def price_items(prices, location, skus):
    """Retail Prices API items for the SKUs the subscription knows: Linux consumption, on-demand and spot, plus the
    Windows and Low Priority meters a client must skip."""
    items = []
    for name in sorted(skus):
        if name not in prices:
            continue
        base = {"currencyCode": "USD", "tierMinimumUnits": 0.0, "armRegionName": location, "location": location,
                "effectiveStartDate": "2024-01-01T00:00:00Z", "meterId": f"{zlib.crc32(name.encode()):08x}",
                "productId": "DZH318Z0BQ4L", "serviceName": "Virtual Machines", "serviceId": "DZH313Z7MMC8",
                "serviceFamily": "Compute", "unitOfMeasure": "1 Hour", "type": "Consumption", "isPrimaryMeterRegion": True,
                "armSkuName": name}
        short = name.replace("Standard_", "").replace("_", " ")
        od = prices[name]
        items.append(dict(base, retailPrice=od, unitPrice=od, meterName=short, skuName=short,
                          productName=f"Virtual Machines {short} Series"))
        sp = spot_price(name, od)
        items.append(dict(base, retailPrice=sp, unitPrice=sp, meterName=short + " Spot", skuName=short + " Spot",
                          productName=f"Virtual Machines {short} Series"))
        items.append(dict(base, retailPrice=od * 0.2, unitPrice=od * 0.2, meterName=short + " Low Priority",
                          skuName=short + " Low Priority", productName=f"Virtual Machines {short} Series"))
        items.append(dict(base, retailPrice=od * 1.8, unitPrice=od * 1.8, meterName=short, skuName=short,
                          productName=f"Virtual Machines {short} Series Windows"))
    return items


def price_page(items, base, query):
    start = int(query.get("$skip", "0") or 0)
    page = items[start:start + 20]
    out = {"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail", "Items": page,
           "NextPageLink": None, "Count": len(page)}
    if start + 20 < len(items):
        out["NextPageLink"] = f"{base}/api/retail/prices?api-version={query.get('api-version', '2023-01-01-preview')}" \
                              f"&$skip={start + 20}"
    return out
