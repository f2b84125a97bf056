"""A DLIO run's results.json, from the files DLIO wrote into run-<k>/ (kept as DLIO wrote them).

summary.json gives the metric (DLIO's own numbers, unchanged, so results.json and summary.json
agree), per_epoch_stats.json the epoch times, <rank>_output.json the per-step times; the
enforcement evidence (cache drop, memory cgroup) and the engine (version, framework path, argv,
start-up time) are ours.
"""

import datetime as dt
import math
from pathlib import Path

from suite import files
from suite.errors import SuiteError
from suite.training import figures as metrics


def _unix(stamp) -> float | None:
    try:
        return dt.datetime.strptime(str(stamp), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.timezone.utc).timestamp()
    except ValueError:
        return None


def load(run_dir: Path, name: str):
    path = run_dir / name
    if not path.is_file():
        return None
    try:
        return files.load_json(path)
    except SuiteError:
        return None


def epochs_from(prep, summary: dict, per_epoch: dict) -> list[dict]:
    """results.json's epochs from DLIO's lists; bytes_read estimated (DLIO 2.0.0 counts none)."""
    wl, n = prep.workload, prep.opts.accelerators
    m = summary["metric"]
    total_samples = len(prep.files) * wl.num_samples_per_file
    steps = wl.total_training_steps or math.floor(total_samples / wl.batch_size / n)
    bytes_per_sample = prep.total_bytes / total_samples if total_samples else 0.0
    out = []
    for i, (au, tput) in enumerate(zip(m[metrics.AU_PER_EPOCH], m[metrics.SAMPLES])):
        e = per_epoch.get(str(i + 1), {}) if isinstance(per_epoch, dict) else {}
        t0, t1 = _unix(e.get("start")), _unix(e.get("end"))
        duration = (t1 - t0) if t0 is not None and t1 is not None else 0.0
        samples = steps * wl.batch_size * n
        out.append({
            "epoch": i + 1, "start": e.get("start"), "end": e.get("end"), "duration_s": max(0.0, duration),
            "steps": steps, "samples": samples, "bytes_read": int(samples * bytes_per_sample),
            "bytes_read_estimated": True, "au_percentage": float(au), "throughput_samples_per_second": float(tput),
            "throughput_mib_per_second": metrics.mib_per_second(float(tput), wl.record_length_bytes),
            "read_mib_per_second": (samples * bytes_per_sample / metrics.MIB / duration) if duration > 0 else 0.0,
        })
    return out


def checkpoint_from(prep, per_epoch: dict):
    for key, e in sorted((per_epoch or {}).items()):
        for name, block in (e.items() if isinstance(e, dict) else []):
            if name.startswith("ckpt") and isinstance(block, dict):
                folder = prep.workload.config.get("checkpoint", {}).get("checkpoint_folder", "checkpoints")
                return {"bytes_written": int(prep.workload.checkpoint_model_size_bytes or 0),
                        "duration_s": float(block.get("duration") or 0.0), "epoch": int(key),
                        "path": str((prep.results_dir / folder).resolve())}
    return None


def collect(prep, k: int, run_dir: Path, times: tuple, status: str, error, drop, memory_evidence,
            engine: dict) -> dict:
    """run-<k>/results.json for a DLIO run (returned)."""
    from suite.training.run.results import compliance_reasons, fs_separation, results_doc

    launched, ended = times
    summary, per_epoch = load(run_dir, "summary.json"), load(run_dir, "per_epoch_stats.json")
    epochs, metric, checkpoint = [], None, None
    if status == "complete":
        if not isinstance(summary, dict) or not isinstance(summary.get("metric"), dict) \
                or metrics.AU_PER_EPOCH not in summary["metric"]:
            status, error = "failed", f"{run_dir / 'summary.json'}: expected DLIO's summary with a metric, got none"
    if status == "complete":
        epochs = epochs_from(prep, summary, per_epoch or {})
        bytes_read = sum(e["bytes_read"] for e in epochs)
        wall = sum(e["duration_s"] for e in epochs)
        metric = {**{key: _plain(v) for key, v in summary["metric"].items()}, "bytes_read": bytes_read,
                  "throughput_mib_s": bytes_read / metrics.MIB / wall if wall > 0 else 0.0}
        checkpoint = checkpoint_from(prep, per_epoch)
    start = _unix((summary or {}).get("start")) or launched
    end = _unix((summary or {}).get("end")) or ended
    reasons = compliance_reasons(prep, status, error, drop, metric, memory_evidence)
    if status == "complete" and len(epochs) != prep.workload.epochs and "train.epochs" not in prep.params:
        reasons.append(f"epochs: expected {prep.workload.epochs}, got {len(epochs)} from DLIO")
    doc = results_doc(prep, k, (start, end), status, error, epochs, metric, checkpoint, reasons,
                      {"cache_drop": drop.to_dict(), "memory_limit": memory_evidence, **fs_separation(prep, run_dir)})
    doc["engine"] = {**engine, "startup_s": round(start - launched, 3) if summary else None,
                     "launched": _stamp(launched), "exited": _stamp(ended),
                     "notes": ["throughput window: per block from before the first batch's load (DLIO 2.0.0)",
                               "MB/s: samples/s x configured record_length / 2^20, not bytes read",
                               "bytes_read: estimated from the samples read x the mean bytes per sample on disk"]}
    doc["versions"]["dlio"] = engine["version"]
    files.write_json(run_dir / "results.json", doc, schema="results")
    from suite.training.run.results import write_metadata
    write_metadata(prep, run_dir, doc)
    return doc


def _stamp(unix_s: float) -> str:
    from suite.training.run.dlio_output import timestamp

    return timestamp(unix_s)


def _plain(value):
    """DLIO writes numpy floats through json; they come back as floats; lists stay lists."""
    if isinstance(value, list):
        return [float(v) if isinstance(v, (int, float)) else v for v in value]
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
