"""The system description a submission carries, pre-filled from this host, and its TODOs.

v1.0: systems/<system>.json {networks, nodes, benchmark_hosts, storage_system} (the DDN v1.0 shape);
v2.0: systems/<system>.yaml {System, Nodes, PowerRequirements}. Both validate against the schema
the checker uses. A field this host cannot tell is marked: a string field holds "TODO: <what to
give>"; a number field (the schema needs a number) holds a placeholder and is named in the
document's `todo` list. `todos()` finds both; `todo_findings()` makes them checker findings.
"""

from __future__ import annotations


from suite import files
from suite.submission import host as hostmod
from suite.submission.layout import Tree, layout_of

from suite.layouts.todo import RULE_TODO, RULES, TODO, todo_findings, todos  # noqa: F401  (one place, below check)


def _t(what: str) -> str:
    return f"{TODO}: {what}"


def _or(value, what: str):
    return value if value not in (None, "") else _t(what)


def _network(facts: hostmod.HostFacts, todo: list[str]) -> tuple[float, list[dict]]:
    speeds = [n.speed_gbps for n in facts.nics if n.speed_gbps]
    if not speeds:
        todo.append("networks[0].bitrate: link speed in Gb/s (not reported by /sys/class/net/*/speed on this host)")
    ports = [{"network_name": "storagenet", "bitrate": n.speed_gbps or _t(f"link speed of {n.name} in Gb/s"),
              "count_of_this_type": 1, "protocols": [_t("protocols, e.g. NFS, TCP")], "name": n.name}
             for n in facts.nics if n.state != "down"]
    return (max(speeds) if speeds else 1), ports


def v1_doc(facts: hostmod.HostFacts) -> dict:
    todo: list[str] = []
    bitrate, ports = _network(facts, todo)
    mount = facts.data_mount
    size = mount.size_gib if mount and mount.size_gib is not None else None
    if size is None:
        todo.append("storage_system.usable_capacity_GiB: usable capacity (the data dir's file system was not readable)")
    todo.append("storage_system.raw_capacity_GiB: raw capacity of the storage system in GiB")
    threads = facts.threads // facts.sockets if facts.threads and facts.sockets else None
    client = {
        "node_type_name": "client",
        "config_options": ["default (no tuning applied)"],
        "CPU": {"vendor_and_model_name": _or(facts.cpu_model, "CPU model"),
                "socket_count": _or(facts.sockets, "sockets"),
                "cores_per_socket": _or(facts.cores_per_socket, "cores per socket"),
                "threads_per_socket": _or(threads, "threads per socket")},
        "DRAM": {"capacity_MiB": _or(facts.memory_mib, "memory in MiB"), "class": _t("DRAM class, e.g. DDR5")},
        "accelerators": [],
        "nic_ports": ports,
        "drives": [],
        "operating_system": {"name": _or(facts.os_release, "OS release"), "kernel": _or(facts.kernel, "kernel")},
    }
    storage = {
        "vendor_name": _t("storage vendor"), "solution_name": _t("solution name"), "model_name": _t("model"),
        "version": _t("storage software version"), "software_defined": _t("true or false"),
        "hyperconverged": _t("true or false"),
        "solution_type": mount.fs_type if mount else _t("file system / solution type"),
        "client_mount_options": (mount.options if mount else [_t("client mount options")]),
        "client_mount": ({"mount_point": mount.mount_point, "source": mount.source, "fs_type": mount.fs_type}
                         if mount else _t("mount point of the data dir")),
        "usable_capacity_GiB": size if size is not None else 0, "raw_capacity_GiB": 0,
        "software_components": [],
    }
    return {"networks": [{"network_name": "storagenet", "network_type": _t("Ethernet or InfiniBand"),
                          "bitrate": bitrate, "protocols": [_t("protocols, e.g. NFS, TCP")]}],
            "nodes": [client],
            "benchmark_hosts": [{"node_name": facts.hostname, "node_type_name": "client",
                                 "benchmark_instances": [{"mapping_type": "native"}]}],
            "storage_system": storage, "todo": todo}


def v2_doc(facts: hostmod.HostFacts, system: str) -> dict:
    mount = facts.data_mount
    client = {
        "quantity": 1, "hostnames": [facts.hostname],
        "hardware": {"cpu_model": _or(facts.cpu_model, "CPU model"), "cpu_sockets": _or(facts.sockets, "sockets"),
                     "cpu_cores_per_socket": _or(facts.cores_per_socket, "cores per socket"),
                     "memory_capacity_MiB": _or(facts.memory_mib, "memory in MiB")},
        "networking": [{"name": n.name, "speed_gbps": n.speed_gbps or _t(f"link speed of {n.name} in Gb/s")}
                       for n in facts.nics if n.state != "down"],
        "operating_system": {"name": _or(facts.os_release, "OS release"), "kernel": _or(facts.kernel, "kernel")},
        "tuning": {"data_mount": ({"mount_point": mount.mount_point, "fs_type": mount.fs_type,
                                   "options": mount.options} if mount else _t("mount of the data dir")),
                   "settings": "default (no tuning applied)"},
    }
    return {"System": {"name": system, "description": _t("one-line description of the storage system"),
                       "type": mount.fs_type if mount else _t("solution type")},
            "Nodes": {"client": client, "storage": {"quantity": 1, "hardware": {"model": _t("storage model")}}},
            "PowerRequirements": {"storage": {"quantity": 1, "psu_rating_watts": 0, "design_power_watts": 0}},
            "todo": ["PowerRequirements.storage: the PSU nameplate rating and design power in watts"]}


def build(ruleset: str, facts: hostmod.HostFacts, system: str) -> dict:
    return v1_doc(facts) if layout_of(ruleset).v1_system else v2_doc(facts, system)


def load(tree: Tree, system: str) -> dict:
    path = tree.system_file(system)
    loader = files.load_json if tree.layout.system_ext == "json" else files.load_yaml
    doc = loader(path, schema=tree.layout.system_schema)
    return doc
