"""Parameter facts of a host: the overrides, the effective params.<section.key> (the override,
else config.yaml), and config.differences: every workload parameter config.yaml sets to another
value than the workload file does for the accelerator (closed.yaml holds them to the allow-list).
"""

from __future__ import annotations

from suite.layouts.benchdirs import identify, tree as layout
from suite.numbers import is_number
from suite.rules.engine import Item

EFFECTIVE_PARAMS = ("reader.prefetch_size", "reader.odirect", "workflow.generate_data", "workflow.train")


_SCALARS = {"true": True, "false": False}


def _yaml_value(text: str):
    """An override's value as Hydra reads it: bools, ints, floats, else the string."""
    t = text.strip()
    if t.lower() in _SCALARS:
        return _SCALARS[t.lower()]
    for cast in (int, float):
        try:
            return cast(t)
        except ValueError:
            pass
    return t


def _config_lookup(config, dotted: str):
    node = config
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def param_facts(host: layout.Host, params: dict, facts: dict, sources: dict) -> None:
    """overrides.* and the effective params.<section.key> (the override, else config.yaml)."""
    ovpath = host.files.get("overrides")
    ov = identify.overrides_dict(host.overrides) if host.overrides is not None else None
    if ov is not None:
        facts["overrides.workload"] = ov.get("workload")
        sources["overrides.workload"] = (ovpath, "workload")
        harness = set(params.get("harness_params") or [])
        facts["overrides.params"] = [Item(k, ovpath, k) for k in ov if k != "workload" and k not in harness]
        sources["overrides.params"] = (ovpath, "(overrides)")
    for key in EFFECTIVE_PARAMS:
        if ov is not None and key in ov:
            facts[f"params.{key}"] = _yaml_value(ov[key])
            sources[f"params.{key}"] = (ovpath, key)
        else:
            v = _config_lookup(host.config, key)
            if v is not None:
                facts[f"params.{key}"] = v
                sources[f"params.{key}"] = (host.files.get("config"), key)


def _leaves(doc: dict, prefix: str = ""):
    """(dotted key, value) for every non-mapping value of a workload's DLIO config."""
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _leaves(v, f"{key}.")
        else:
            yield key, v


def _same(a, b) -> bool:
    if is_number(a) and is_number(b) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return type(a) is type(b) and a == b


def config_differences(host: layout.Host, workload) -> list[Item] | None:
    """config.yaml's values that differ from the workload's for this accelerator, one Item each
    (value: the parameter; shown: config.yaml's value; expected: the workload's). None when
    either side is unknown."""
    if workload is None or not isinstance(host.config, dict):
        return None
    path = host.files.get("config")
    out = []
    for key, want in _leaves(workload.config):
        have = _config_lookup(host.config, key)
        if have is not None and not _same(have, want):
            out.append(Item(key, path, key, want, shown=have))
    return out
