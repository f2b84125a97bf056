"""host_metrics.json documents for tests: valid ones with a chosen CPU load (suite.harness.hostmetrics)."""

import json
from pathlib import Path


def sample(t_s: float, user: float = 10.0, system: float = 5.0, iowait: float = 1.0, disk_read: int = 0) -> dict:
    return {"t_s": t_s, "cpu_user_pct": user, "cpu_system_pct": system, "cpu_iowait_pct": iowait,
            "mem_used_bytes": 1 << 30, "page_cache_bytes": 2 << 30, "disk_read_bytes": disk_read,
            "disk_write_bytes": 0, "net_rx_bytes": 0, "net_tx_bytes": 0}


def doc(samples: list) -> dict:
    return {"schema_version": 1, "host": "h1", "scope": "this host", "interval_s": 1.0,
            "started_at": "2026-01-01T00:00:00.000000Z", "duration_s": samples[-1]["t_s"] if samples else 0.0,
            "sampler_cpu_s": 0.01, "disk_devices": ["sda"], "net_interfaces": ["eth0"], "samples": samples}


def saturated(busy_s: int = 20, idle_s: int = 5) -> dict:
    """idle_s quiet seconds, then busy_s seconds at 97% user+system, the disk reading 1 MiB/s throughout."""
    out = [sample(t, disk_read=t << 20) for t in range(1, idle_s + 1)]
    out += [sample(t, user=80.0, system=17.0, iowait=0.5, disk_read=t << 20) for t in range(idle_s + 1, idle_s + busy_s + 1)]
    return doc(out)


def write(where: Path, document: dict) -> Path:
    path = Path(where) / "host_metrics.json"
    path.write_text(json.dumps(document))
    return path


def copied_results(voiced, kind: str, dest: Path) -> tuple[Path, list[Path]]:
    """A copy (at dest) of the session's real results of `kind` (the `voiced` fixture), and its
    host_metrics.json files, sorted; the test skips where that kind's run could not be made."""
    import shutil

    import pytest

    from suite.harness import hostmetrics

    got = voiced[kind]
    if isinstance(got, BaseException):
        pytest.skip(str(got))
    shutil.copytree(got[2], dest, symlinks=True)
    found = sorted(dest.rglob(hostmetrics.FILE))
    assert found, f"{kind}: its run wrote no {hostmetrics.FILE}"
    return dest, found
