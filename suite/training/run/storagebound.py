"""Whether a Parquet run's AU is the storage's: the decode share and the page-cache ceiling.

Every Parquet step records what the rank's reader threads did since the step before: bytes, requests,
wall seconds in storage reads (step_io_s) and CPU seconds decoding (step_decode_s) (suite.training.run.rank,
suite.training.data.parquet_read). A run's `reads` (results.json) sums them over ranks and steps; its decode
share is decode / (I/O + decode). Where decoding takes most of the reader's time, a slower or faster
storage barely moves AU: the figure is the CPU's, not the storage's (mlcommons/storage #323, #330, #364).

The ceiling: before the series, the same run once more with its files pre-read into the page cache and no
cache drop (what `suite sweep --ceiling` measures: what no storage can beat on this host, the reader's
decode included). Its AU, decode share and wall time are on every results.json and on run_set.json. For
object storage there is no client page cache to fill: the ceiling is not measured (said so, not zero).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from suite.enforce.cache import preread

DECODE_DOMINATES_PERCENT = 50.0      # the check's line (rules/v3.0/common.yaml parquet-storage-bound)


def reads(ranks: list) -> dict | None:
    """The run's Parquet reads from its ranks' step records (RankSteps); None for other formats."""
    epochs = [e for r in ranks for e in r.epochs]
    if not any(e.columns_read for e in epochs):
        return None
    io_s = sum(sum(e.step_io_s) for e in epochs)
    decode_s = sum(sum(e.step_decode_s) for e in epochs)
    busy = io_s + decode_s
    return {
        "columns_read": list(next(e.columns_read for e in epochs if e.columns_read)),
        "bytes_read": int(sum(sum(e.step_bytes_read) for e in epochs)),
        "requests": int(sum(sum(e.step_requests) for e in epochs)),
        "io_s": io_s, "decode_s": decode_s,
        "decode_share_percent": 100.0 * decode_s / busy if busy > 0 else 0.0,
    }


def _ranks(run_dir: Path, n: int) -> list:
    """The ceiling run's steps/rank-<r>.json that exist (RankSteps), in rank order."""
    from suite import files
    from suite.training.run.records import RankSteps

    found = [run_dir / "steps" / f"rank-{r}.json" for r in range(n)]
    return [RankSteps.from_dict(files.load_json(p, schema="steps")) for p in found if p.exists()]


def ceiling(prep, plan_for, launch, say) -> dict:
    """The page-cache ceiling of `prep`'s run: its files pre-read, one run of the same plan (`plan_for`
    (run_dir) -> RunPlan) launched by `launch(plan, run_dir) -> (status, error)` in a scratch folder
    outside the results tree (removed after). What results.json and run_set.json carry as `ceiling`."""
    from suite import files
    from suite.storage.objectstore import is_object
    from suite.training import figures as metrics

    base = {"source": "page cache: the files pre-read, no cache drop, one run before the series"}
    if is_object(prep):
        return {**base, "au_percentage": None, "why": "object storage: no client page cache to fill"}
    nbytes, secs = preread([p for p, _ in prep.files])
    say(f"ceiling: {nbytes / 1024**3:.2f} GiB pre-read into the page cache in {secs:.1f} s; one run from memory")
    scratch = Path(tempfile.mkdtemp(prefix="suite-ceiling-"))
    try:
        (scratch / "steps").mkdir()
        plan = plan_for(scratch)
        files.write_json(scratch / "plan.json", plan.to_dict(), schema="plan", indent=None)
        t0 = time.time()
        status, error = launch(plan, scratch)
        ranks = _ranks(scratch, prep.opts.accelerators)
        if status != "complete" or len(ranks) != prep.opts.accelerators:
            return {**base, "au_percentage": None, "why": f"the ceiling run {status}: {error}"}
        aus = [metrics.epoch_from_ranks([r.epochs[i] for r in ranks])[0] for i in range(len(ranks[0].epochs))]
        split = reads(ranks) or {}
        return {**base, "au_percentage": sum(aus) / len(aus), "duration_s": time.time() - t0,
                "preread_bytes": nbytes, "decode_share_percent": split.get("decode_share_percent")}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
