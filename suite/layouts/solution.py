"""A published v3.0 system description's columns (and the mean the kinds' figures share), as the round's report generator computes them
(mlcommons/storage, Rules.md 3.3.8, 4.3.6 and the results-table columns; facts, not code).

- training (3.3.8): over the five measured runs (the warm-up, the lexically earliest run
  directory, left out): Read B/W (GiB/s) = mean of `train_io_mean_MB_per_second` / 1024 (DLIO's
  "MB/s" is MiB/s); samples/s = mean of `train_throughput_mean_samples_per_second`; AU (%) = mean
  of each run's per-epoch `train_au_percentage` mean (re-derived; the recorded
  `train_au_mean_percentage` where no per-epoch figures are). Arithmetic means; no run dropped.
- checkpointing (4.3.6): write (read) GiB/s = mean over the write (read) invocations of
  `save_checkpoint_io_mean_GB_per_second` (`load_...`): DLIO's "GB" is GiB; likewise durations.
- Provisioned Power (W): nameplate_power_watts x unit_count over every PSU of the product nodes
  (x node quantity) and product switches (x switch unit_count); clients and rack_power_supplies
  excluded; blank (None) where nothing is itemized (cloud, storage inside the clients).
- RU's: the declared `total_rack_units`; `itemized_rack_units` is the sum it must equal.
"""

from __future__ import annotations

from statistics import fmean

from suite.numbers import is_number

GIB_PER_MIB = 1 / 1024


def mean(values):
    vals = [v for v in values if is_number(v)]
    return fmean(vals) if vals and len(vals) == len(values) else None


def _int(x) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) and x > 0 else 0


def _psu_watts(power) -> int:
    if not isinstance(power, dict) or not isinstance(power.get("psus_configured"), list):
        return 0
    return sum(_int(p.get("nameplate_power_watts")) * _int(p.get("unit_count"))
               for p in power["psus_configured"] if isinstance(p, dict))


def _sut(doc) -> dict:
    sut = doc.get("system_under_test") if isinstance(doc, dict) else None
    return sut if isinstance(sut, dict) else {}


def _groups(sut: dict, key: str) -> list[dict]:
    v = sut.get(key)
    return [g for g in v if isinstance(g, dict)] if isinstance(v, list) else []


def provisioned_power_w(doc) -> int | None:
    sut = _sut(doc)
    total = 0
    for node in _groups(sut, "product_nodes"):
        chassis = node.get("chassis") if isinstance(node.get("chassis"), dict) else {}
        total += _psu_watts(chassis.get("power")) * _int(node.get("quantity"))
    for sw in _groups(sut, "product_switches"):
        total += _psu_watts(sw.get("power")) * _int(sw.get("unit_count"))
    return total or None


def rack_units(doc) -> int | None:
    ru = _sut(doc).get("total_rack_units")
    return ru if isinstance(ru, int) and not isinstance(ru, bool) else None


def itemized_rack_units(doc) -> int:
    sut = _sut(doc)
    nodes = sum(_int((n.get("chassis") or {}).get("rack_units") if isinstance(n.get("chassis"), dict) else 0)
                * _int(n.get("quantity")) for n in _groups(sut, "product_nodes"))
    return nodes + sum(_int(s.get("rack_units")) * _int(s.get("unit_count")) for s in _groups(sut, "product_switches"))


def _sut_type(sol: dict, arch: dict) -> str | None:
    """The results tables' Type: Shared (simultaneous write and read) or Failover, the storage
    location, the product API; None when one of them is not declared."""
    caps = sol.get("capabilities") if isinstance(sol.get("capabilities"), dict) else {}
    loc, api = arch.get("storage_location"), arch.get("product_API")
    w, r = caps.get("simultaneous_write"), caps.get("simultaneous_read")
    if None in (loc, api, w, r):
        return None
    where = "remote and local" if loc == "remote_and_local" else str(loc)
    return f"{'Shared' if w and r else 'Failover'} {where} {api}"


def solution(doc) -> dict:
    """The system-under-test columns: availability, usable capacity (TiB), integrated client storage."""
    sol = _sut(doc).get("solution")
    sol = sol if isinstance(sol, dict) else {}
    arch = sol.get("architecture") if isinstance(sol.get("architecture"), dict) else {}

    def num(k):
        return sol.get(k) if is_number(sol.get(k)) else None
    api = arch.get("benchmark_API")
    return {"sut_type": _sut_type(sol, arch), "access_protocol": None if api is None else "POSIX" if api == "file" else "S3",
            "availability": sol.get("availability") if isinstance(sol.get("availability"), str) else None,
            "usable_capacity_tib": num("usable_capacity_tib"), "int_client_store_tib": num("int_client_store_tib"),
            "deployment": _sut(doc).get("deployment") if isinstance(_sut(doc).get("deployment"), str) else None,
            "storage_location": arch.get("storage_location") if isinstance(arch.get("storage_location"), str) else None,
            "benchmark_api": arch.get("benchmark_API") if isinstance(arch.get("benchmark_API"), str) else None}
