"""Data and results on different file systems (MLPerf Storage v3.0): the evidence, per run, and the refusal.

    doc = separation.probe(workload, data_dir, results_dir)   # fs_separation.json's content
    separation.refuse(doc, division, miniature)               # closed, full size: RuleError when shared

The data side is the workload's storage backend's evidence() (path, real path, device id, file-system
type, mount point); the results side the POSIX backend's for the results dir (its nearest existing
ancestor when it is not made yet). Two paths share a file system when their device ids are equal.
"""

from datetime import datetime, timezone
from pathlib import Path

from suite import files
from suite.errors import RuleError, SuiteError

FILE = "fs_separation.json"
KEYS = ("path", "real_path", "device_id", "fs_type", "mount_point")


def _side(backend, label: str) -> dict:
    try:
        ev = backend.evidence()
    except OSError as exc:
        raise SuiteError(f"{backend.root}: {label} file system: cannot probe: {exc.strerror or exc}") from None
    return {k: ev.get(k) for k in KEYS}


def probe(workload, data_dir, results_dir) -> dict:
    """The evidence of both sides, when probed, and whether they are separate. `data_dir`: the
    command's DataLocation (a path or s3:// URL is resolved here, with the workload's storage type)."""
    from suite.storage.backend.select import backend_for, resolve

    loc = resolve(data_dir, workload)
    location = loc.root
    data = _side(loc.backend, "data")
    results = _side(backend_for("local_fs", Path(results_dir)), "results")
    if data["device_id"] is None and str(location).startswith("s3://"):    # object storage: no file system here
        data = {**data, "real_path": str(location), "device_id": "s3", "fs_type": "s3", "mount_point": str(location)}
    separate = data["device_id"] != results["device_id"]
    now = datetime.now(timezone.utc)
    return {"schema_version": 1, "probed_at": now.isoformat(timespec="seconds"),
            "data": data, "results": results, "separate": separate, **_published(data, results, separate, now)}


def _published(data: dict, results: dict, separate: bool, now) -> dict:
    """The keys mlpstorage's v3.0 fs_separation.json has (published leaves), so its tools read ours:
    method (ours: the device ids of a stat), the paths and real paths, same_filesystem, who probed."""
    import socket

    return {"version": 1, "method": "stat_st_dev", "data_or_chkpt_path": data["path"],
            "results_path": results["path"], "data_or_chkpt_realpath": data["real_path"],
            "results_realpath": results["real_path"], "same_filesystem": not separate,
            "probed_by_rank": 0, "probed_by_host": socket.gethostname()}


def refuse(doc: dict, division: str, miniature: bool, option: str = "--data-dir") -> str | None:
    """Closed and full size: RuleError when data and results share a file system. Otherwise the
    reason the run is not compliant (None when separate). `option`: what the user named the data
    location with (kv_cache: --cache-dir)."""
    if doc["separate"]:
        return None
    d, r = doc["data"], doc["results"]
    what = (f"{option} {d['path']} and --results-dir {r['path']}: file systems: expected different ones "
            f"(data and results apart), got one ({d['fs_type']} device {d['device_id']} at {d['mount_point']})")
    if division == "closed" and not miniature:
        raise RuleError(what)
    return what


def write(run_dir: Path, doc: dict) -> None:
    files.write_json(Path(run_dir) / FILE, doc, schema="fs-separation")
