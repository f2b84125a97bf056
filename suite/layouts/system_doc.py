"""The v3.0 system description (`<Org>/systems/<system>.yaml`) against the round's schema, as the
review staff's validator holds it (Rules.md 2.1.7; facts from mlcommons/storage's schema and the
staff's ApparentProblems.md, not its code).

`problems(doc)` lists (field, expected, actual) for every violation; `hardware_problems(doc)` the
power and rack-unit ones the published columns depend on (an on-premises system with remote
storage must itemize `product_nodes` with PSU power; the itemized rack units must sum to
`total_rack_units`).
"""

from __future__ import annotations

from suite.numbers import is_number
from suite.layouts import solution as v3figures

AVAILABILITY = ("available", "preview", "RDI")
STORAGE_LOCATION = ("remote", "local", "remote_and_local")
BENCHMARK_API = ("file", "object")
PRODUCT_API = ("file", "object", "block")
FOOTPRINT = ("open_source", "closed_source", "n/a")
INSTALLATION = ("in_box", "installable", "n/a")
DEPLOYMENT = ("onprem", "cloud")
EFFICIENCY = ("Standard", "Bronze", "Silver", "Gold", "Platinum", "Titanium", "Ruby", "Unrated")
MIN_CAPACITY_TIB = 1


def _int(v, minimum: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= minimum


def _text(v) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _shown(v):
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


class _Out:
    def __init__(self):
        self.items: list[tuple[str, str, str]] = []

    def need(self, ok: bool, where: str, expected: str, actual) -> bool:
        if not ok:
            self.items.append((where, expected, _shown(actual)))
        return ok


def _mapping(out: _Out, v, where: str) -> dict:
    return v if out.need(isinstance(v, dict), where, "a mapping", v) else {}


def _power(out: _Out, p, where: str) -> None:
    p = _mapping(out, p, where)
    if not p:
        return
    out.need(_int(p.get("min_psus_active"), 1), f"{where}.min_psus_active", "an integer >= 1", p.get("min_psus_active"))
    psus = p.get("psus_configured")
    if not out.need(isinstance(psus, list) and len(psus) >= 1, f"{where}.psus_configured", "a list of >= 1 PSU groups", psus):
        return
    for i, psu in enumerate(psus):
        w = f"{where}.psus_configured[{i}]"
        psu = _mapping(out, psu, w)
        if not psu:
            continue
        out.need(_int(psu.get("unit_count"), 1), f"{w}.unit_count", "an integer >= 1", psu.get("unit_count"))
        out.need(_int(psu.get("inlet_voltage"), 1), f"{w}.inlet_voltage", "an integer > 0", psu.get("inlet_voltage"))
        out.need(_int(psu.get("nameplate_power_watts"), 1), f"{w}.nameplate_power_watts", "an integer >= 1",
                 psu.get("nameplate_power_watts"))
        out.need(psu.get("efficiency") in EFFICIENCY, f"{w}.efficiency", f"one of {', '.join(EFFICIENCY)}",
                 psu.get("efficiency"))
    total = sum(x.get("unit_count", 0) for x in psus if isinstance(x, dict) and _int(x.get("unit_count"), 1))
    if _int(p.get("min_psus_active"), 1):
        out.need(p["min_psus_active"] <= total, f"{where}.min_psus_active", f"at most the {total} PSUs configured",
                 p["min_psus_active"])


def _node(out: _Out, node, where: str, onprem: bool, cloud: bool, networked: bool, client: bool) -> None:
    node = _mapping(out, node, where)
    if not node:
        return
    out.need(_text(node.get("friendly_description")), f"{where}.friendly_description", "a description",
             node.get("friendly_description"))
    out.need(_int(node.get("quantity"), 1), f"{where}.quantity", "an integer >= 1", node.get("quantity"))
    ch = _mapping(out, node.get("chassis"), f"{where}.chassis")
    for key, minimum in (("cpu_qty", 1), ("cpu_cores", 1), ("memory_capacity", 1)):
        out.need(_int(ch.get(key), minimum), f"{where}.chassis.{key}", f"an integer >= {minimum}", ch.get(key)) if ch else None
    if ch:
        for key in ("model_name", "cpu_model"):
            out.need(_text(ch.get(key)), f"{where}.chassis.{key}", "a name", ch.get(key))
        if onprem:
            out.need(_int(ch.get("rack_units"), 1), f"{where}.chassis.rack_units",
                     "an integer >= 1 (required on premises)", ch.get("rack_units"))
            if out.need(ch.get("power") is not None, f"{where}.chassis.power", "a power block (required on premises)", None):
                _power(out, ch["power"], f"{where}.chassis.power")
        elif cloud:
            out.need(ch.get("rack_units") is None, f"{where}.chassis.rack_units", "absent in the cloud", ch.get("rack_units"))
            out.need(ch.get("power") is None, f"{where}.chassis.power", "absent in the cloud", "a power block")
    osys = _mapping(out, node.get("operating_system"), f"{where}.operating_system")
    for key in ("name", "version") if osys else ():
        out.need(_text(osys.get(key)), f"{where}.operating_system.{key}", "a name", osys.get(key))
    if networked:
        out.need(isinstance(node.get("networking"), list) and bool(node["networking"]), f"{where}.networking",
                 "a list of ports (storage is remote)", node.get("networking"))


def _solution(out: _Out, sol) -> None:
    sol = _mapping(out, sol, "solution")
    if not sol:
        return
    for key in ("submission_name", "friendly_description"):
        out.need(_text(sol.get(key)), f"solution.{key}", "a name", sol.get(key))
    cap = sol.get("usable_capacity_tib")
    out.need(is_number(cap) and cap >= MIN_CAPACITY_TIB, "solution.usable_capacity_tib",
             f"a number of TiB >= {MIN_CAPACITY_TIB}", cap)
    out.need(sol.get("availability") in AVAILABILITY, "solution.availability", f"one of {', '.join(AVAILABILITY)}",
             sol.get("availability"))
    if "int_client_store_tib" in sol:
        v = sol["int_client_store_tib"]
        out.need(is_number(v) and v >= MIN_CAPACITY_TIB, "solution.int_client_store_tib",
                 f"a number of TiB >= {MIN_CAPACITY_TIB}", v)
    arch = _mapping(out, sol.get("architecture"), "solution.architecture")
    for key, allowed in (("storage_location", STORAGE_LOCATION), ("benchmark_API", BENCHMARK_API),
                         ("product_API", PRODUCT_API), ("client_footprint", FOOTPRINT),
                         ("client_installation", INSTALLATION)):
        out.need(arch.get(key) in allowed, f"solution.architecture.{key}", f"one of {', '.join(allowed)}",
                 arch.get(key)) if arch else None
    if arch and (arch.get("client_footprint") == "n/a") != (arch.get("client_installation") == "n/a"):
        out.need(False, "solution.architecture.client_installation", "'n/a' exactly when client_footprint is",
                 arch.get("client_installation"))
    caps = _mapping(out, sol.get("capabilities"), "solution.capabilities")
    if caps:
        for key in ("multi_host", "simultaneous_write", "simultaneous_read"):
            out.need(isinstance(caps.get(key), bool), f"solution.capabilities.{key}", "true or false", caps.get(key))
        remap = caps.get("remap_time_in_seconds")
        if out.need(_int(remap, 0), "solution.capabilities.remap_time_in_seconds", "an integer >= 0", remap):
            both = caps.get("simultaneous_write") is True and caps.get("simultaneous_read") is True
            out.need((remap == 0) == both, "solution.capabilities.remap_time_in_seconds",
                     "0 exactly when simultaneous_write and simultaneous_read are both true", remap)


def problems(doc) -> list[tuple[str, str, str]]:
    """Every schema violation of a system description, as (field, expected, actual)."""
    out = _Out()
    sut = _mapping(out, doc.get("system_under_test") if isinstance(doc, dict) else None, "system_under_test")
    if not sut:
        return out.items
    _solution(out, sut.get("solution"))
    dep = sut.get("deployment")
    out.need(dep in DEPLOYMENT, "deployment", f"one of {', '.join(DEPLOYMENT)}", dep)
    sol = sut.get("solution") if isinstance(sut.get("solution"), dict) else {}
    arch = sol.get("architecture") if isinstance(sol.get("architecture"), dict) else {}
    networked = arch.get("storage_location") in ("remote", "remote_and_local")
    clients = sut.get("clients")
    if out.need(isinstance(clients, list) and len(clients) >= 1, "clients", "a list of >= 1 client groups", clients):
        for i, c in enumerate(clients):
            _node(out, c, f"clients[{i}]", dep == "onprem", dep == "cloud", networked, True)
    nodes = sut.get("product_nodes")
    if nodes is not None and out.need(isinstance(nodes, list), "product_nodes", "a list of node groups", nodes):
        for i, n in enumerate(nodes):
            _node(out, n, f"product_nodes[{i}]", dep == "onprem", dep == "cloud", networked, False)
    switches = sut.get("product_switches")
    if switches:
        out.need(dep != "cloud", "product_switches", "absent in the cloud", "switches")
        out.need(arch.get("storage_location") != "local", "product_switches", "absent when storage is local", "switches")
    if dep == "onprem":
        out.need(_int(sut.get("total_rack_units"), 0), "total_rack_units", "an integer >= 0 (required on premises)",
                 sut.get("total_rack_units"))
    elif dep == "cloud":
        out.need(not sut.get("rack_power_supplies"), "rack_power_supplies", "absent in the cloud", "present")
    return out.items


def hardware_problems(doc) -> list[tuple[str, str, str]]:
    """What keeps the published RU's and Provisioned Power (W) columns from being substantiated."""
    sut = doc.get("system_under_test") if isinstance(doc, dict) else None
    if not isinstance(sut, dict) or sut.get("deployment") != "onprem":
        return []
    sol = sut.get("solution") if isinstance(sut.get("solution"), dict) else {}
    arch = sol.get("architecture") if isinstance(sol.get("architecture"), dict) else {}
    out = []
    if arch.get("storage_location") == "remote" and not sut.get("product_nodes"):
        out.append(("product_nodes", "the storage nodes itemized with rack_units and chassis.power (on premises, "
                    "remote storage: the Provisioned Power (W) column is derived from them)", "none"))
    declared = v3figures.rack_units(doc)
    itemized = v3figures.itemized_rack_units(doc)
    if declared is not None and declared != itemized:
        out.append(("total_rack_units", f"the itemized product_nodes + product_switches rack units ({itemized})",
                    str(declared)))
    return out
