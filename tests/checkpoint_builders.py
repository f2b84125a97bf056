"""Checkpointing result trees for `suite check` tests, written through the runner's own results
code (suite.checkpointing.results) from rank records; and one failing edit per rule id."""

import json
import uuid
from pathlib import Path

from suite import files
from suite.checkpointing import workloads
from suite.checkpointing import model
from suite.checkpointing import results

T0 = 1_790_000_000.0


def rank_docs(processes: int, phase: str, rank_bytes, count: int, start: float) -> list[dict]:
    out = []
    for r in range(processes):
        cks, t = [], start
        for k in range(1, count + 1):
            d = 0.5 + 0.01 * r + 0.001 * k
            cks.append({"phase": phase, "index": k, "bytes": rank_bytes[r], "files": 2, "start_unix_s": t,
                        "end_unix_s": t + d, "duration_s": d})
            t += 1.0
        out.append({"schema_version": 1, "rank": r, "hostname": "host1", "pid": 100 + r, "checkpoints": cks})
    return out


def phase(root: Path, name: str, which: str, start: float, written_by: dict | None = None, processes: int = 8,
          workload: str = "llama3-8b", mode: str = "default", division: str = "closed", runs: int = 5,
          count: int = 10) -> Path:
    """One phase's results dir with `runs` complete runs, as suite run writes it."""
    ck = model.from_workload(workloads.load(workload), processes, mode)
    d = root / name
    done = []
    for k in range(1, runs + 1):
        run_dir = d / f"run-{k}"
        (run_dir / "ranks").mkdir(parents=True)
        t = start + 100 * k
        ranks = rank_docs(processes, which, ck.rank_bytes, count, t)
        for doc in ranks:        # test input: schema-checked, written plainly (no fsync per file)
            assert not files.schema_errors(doc, "checkpoint-rank")
            (run_dir / "ranks" / f"rank-{doc['rank']}.json").write_text(json.dumps(doc))
        p = ck.parallelism
        doc = {"schema_version": 1, "kind": "checkpointing", "workload": workload, "phase": which, "mode": mode,
               "division": division, "ruleset": "v2.0", "miniature": False, "run": k, "processes": processes,
               "hosts": ["host1"], "processes_per_host": {"host1": processes},
               "parallelism": {"tensor": p.tensor, "pipeline": p.pipeline, "data": p.data, "zero_stage": p.zero_stage},
               "checkpoint_dir": "/ckpt", "checkpoint_bytes": ck.total_bytes, "files_per_checkpoint": 16,
               "num_checkpoints_write": count if which == "write" else 0,
               "num_checkpoints_read": count if which == "read" else 0, "fsync": True,
               "time_between_checkpoints_s": 5.0, "host_memory_bytes": 64 << 30, "status": "complete", "error": None,
               "complete": True, "start_unix_s": t, "end_unix_s": t + 50, "written_by": written_by,
               "enforcement": {"cache_drop": {"attempted": True, "succeeded": True, "duration_s": 0.1},
                               "memory_limit": None, "resident_bytes_before_read": 0 if which == "read" else None}}
        done.append(results.write_run(run_dir, doc, ranks))
    head = {"workload": workload, "phase": which, "mode": mode, "division": division, "miniature": False,
            "processes": processes, "phase_id": uuid.uuid4().hex}
    results.write_run_set(d, head, done, runs, ["suite", "run"])
    return d


def checkpoint_tree(tmp: Path, **kw) -> Path:
    """ck/W (write) and ck/R (read, after it): a compliant closed llama3-8b result."""
    root = tmp / "ck"
    w = phase(root, "W", "write", T0, **kw)
    by = written_by(w, T0 + 1000)
    phase(root, "R", "read", T0 + 10_000, written_by=by, **kw)
    return root


def written_by(write: Path, end: float) -> dict:
    """What the read phase records of its write, as the runner records it (suite.checkpointing.manifest):
    the write's layout, its run set's phase_id (write_id), its results dir relative to the read's."""
    from suite.checkpointing import manifest

    doc = json.loads((write / "run-1" / "results.json").read_text())
    man = {k: doc[k] for k in manifest.LAYOUT_KEYS}
    man.update(checkpoints=doc["num_checkpoints_write"], fsync=doc["fsync"], results_dir=str(write.resolve()),
               end_unix_s=end, write_id=json.loads((write / "checkpoint_run_set.json").read_text())["phase_id"])
    return manifest.reference(man, write.parent / "R")


def edit_runs(phase_name: str, fn, runs=(1,)):
    def edit(p):
        for k in runs:
            path = p / phase_name / f"run-{k}" / "results.json"
            doc = json.loads(path.read_text())
            fn(doc)
            path.write_text(json.dumps(doc))
    return edit


def edit_set(phase_name: str, fn):
    def edit(p):
        path = p / phase_name / "checkpoint_run_set.json"
        doc = json.loads(path.read_text())
        fn(doc)
        path.write_text(json.dumps(doc))
    return edit


def _rm_read(p):
    import shutil
    shutil.rmtree(p / "R")


def _subset_70b(p):
    for name in ("W", "R"):
        edit_set(name, lambda d: d.update(workload="llama3-70b", mode="subset"))(p)


def _not_multiple(p):
    edit_set("W", lambda d: d.update(processes=12))(p)
    edit_runs("W", lambda d: d["parallelism"].update(tensor=8))(p)


def _rank_edit(p):
    path = p / "R" / "run-2" / "ranks" / "rank-3.json"
    doc = json.loads(path.read_text())
    doc["checkpoints"][0]["duration_s"] *= 3.0
    path.write_text(json.dumps(doc))


def _rank_time_edit(p):
    """A rank's duration shortened with results.json and summary.json rewritten to agree: only the rank's own
    start and end still tell."""
    from suite.checkpointing import results as res

    run_dir = p / "W" / "run-1"
    path = run_dir / "ranks" / "rank-0.json"
    doc = json.loads(path.read_text())
    for c in doc["checkpoints"]:
        c["duration_s"] /= 10
    path.write_text(json.dumps(doc))
    d = json.loads((run_dir / "results.json").read_text())
    res.write_run(run_dir, d, res.load_ranks(run_dir, d["processes"]))


def _real_miniature(p):
    """The real miniature pair `suite run --workload llama3-8b` made (tests/data/checkpoint/): labelled
    miniature in every file (a label in the run set alone now contradicts its runs, issue 24)."""
    import shutil

    from tests.paths import DATA

    for name in ("W", "R"):
        shutil.rmtree(p / name)
        shutil.copytree(DATA / "checkpoint" / "llama3-8b-miniature" / name, p / name)


CASES = {
    "checkpoint-write-and-read": _rm_read,
    "checkpoint-read-after-write": edit_runs("R", lambda d: d["written_by"].update(write_id="0" * 32)),
    "checkpoint-rank-records": _rank_time_edit,
    "checkpoint-run-set-recomputed": edit_set("R", lambda d: d["overall"].update(
        read_throughput_mean_gib_s=d["overall"]["read_throughput_mean_gib_s"] * 2)),
    "checkpoint-runs": edit_runs("W", lambda d: d.update(status="failed", complete=False), runs=(5,)),
    "checkpoint-count": edit_runs("W", lambda d: d.update(num_checkpoints_write=3), runs=(1, 2, 3, 4, 5)),
    "checkpoint-fsync": edit_runs("W", lambda d: d.update(fsync=False), runs=(2,)),
    "checkpoint-subset-8b-only": _subset_70b,
    "checkpoint-processes-per-host": edit_runs("W", lambda d: d.update(processes_per_host={"a": 5, "b": 3})),
    "checkpoint-processes-multiple": _not_multiple,
    "checkpoint-miniature": _real_miniature,
    "checkpoint-run-complete": edit_runs("R", lambda d: d.update(status="interrupted", complete=False), runs=(3,)),
    "checkpoint-read-cache-drop": edit_runs("R", lambda d: d["enforcement"]["cache_drop"].update(succeeded=False)),
    "checkpoint-read-not-cached": edit_runs("R", lambda d: d["enforcement"].update(
        resident_bytes_before_read=d["checkpoint_bytes"] * 10 // 2)),
    "checkpoint-figures-recomputed": _rank_edit,
    "checkpoint-closed-processes": edit_set("W", lambda d: d.update(processes=16)),
}


# --------------------------------------------------------------------------- v3.0 (rules/v3.0/checkpointing*.yaml)


def checkpoint_tree_v3(tmp: Path) -> Path:
    """ck3/checkpointing/llama3-8b/{write leaf, read leaf}: the real v3.0 miniature pair `suite run
    --workload llama3-8b --accelerators 8 --ruleset v3.0` made (tests/data/checkpoint/v3-llama3-8b-miniature)."""
    import shutil

    from tests.paths import DATA

    root = tmp / "ck3"
    shutil.copytree(DATA / "checkpoint" / "v3-llama3-8b-miniature" / "R", root)
    for fs in root.glob("checkpointing/llama3-8b/*/fs_separation.json"):    # as a run with its checkpoints on
        doc = json.loads(fs.read_text())                                    # another file system (the passing case)
        doc.update(separate=True)
        fs.write_text(json.dumps(doc))
    return root


def v3_leaf(root: Path, phase_name: str) -> Path:
    """The leaf of `phase_name` (write | read) under root/checkpointing/llama3-8b/."""
    for d in sorted((root / "checkpointing" / "llama3-8b").iterdir()):
        if json.loads((d / "checkpoint_run_set.json").read_text())["phase"] == phase_name:
            return d
    raise AssertionError(f"no {phase_name} leaf under {root}")


def edit_v3(phase_name: str, fn, what: str = "run-1/results.json"):
    def edit(root):
        path = v3_leaf(root, phase_name) / what
        doc = json.loads(path.read_text())
        fn(doc)
        path.write_text(json.dumps(doc))
    return edit


def _v3_subset_16(root):
    """The write leaf recording subset mode with 16 processes (its metadata, as mlpstorage records it)."""
    def subset(d):
        d["override_parameters"]["checkpoint.mode"] = "subset"
        d["num_processes"] = 16
    leaf = v3_leaf(root, "write")
    edit_v3("write", subset, f"checkpointing_{leaf.name}_metadata.json")(root)


def _v3_no_timeseries(root):
    leaf = v3_leaf(root, "write")
    (leaf / f"checkpointing_{leaf.name}_timeseries.json").unlink()


def _v3_late_read(root):
    """The write 40 s earlier than it was (its timed section and its run's record): the read started more
    than 30 s after the write's end."""
    def shift(d):
        d.update(start_unix_s=d["start_unix_s"] - 40, end_unix_s=d["end_unix_s"] - 40)

    def earlier(d):
        from datetime import datetime, timedelta
        for k in ("start", "end"):
            d[k] = (datetime.fromisoformat(d[k]) - timedelta(seconds=40)).isoformat()
    edit_v3("write", shift)(root)
    edit_v3("write", earlier, "summary.json")(root)


# the rules only our runs' evidence meets (rules/v3.0/checkpointing*.yaml)
CASES_V3 = {
    "checkpoint-leaf-files": _v3_no_timeseries,
    "checkpoint-handoff-recorded": edit_v3("read", lambda d: d.pop("handoff")),
    "checkpoint-cache-clear-3x": edit_v3("read", lambda d: d["handoff"]["cache_clear"].update(succeeded=False)),
    "checkpoint-cache-clear-consistent": edit_v3("read", lambda d: d["handoff"]["cache_clear"].update(
        resident_bytes_after=d["handoff"]["checkpoint_bytes_per_client"])),
}
# the Rules.md clauses our pair meets as the reference tool's leaves do: the checkpointing judge's one rule each
# (rules/v3.0/checkpointing-leaves.yaml), with the ids that held them for our pairs before (tests/rules)
JUDGED_V3 = {
    "4.3.5-checkpointSubsetRunValidation": _v3_subset_16,
    "4.4.2-checkpointFilesystemCheck": edit_v3("write", lambda d: d.update(separate=False), "fs_separation.json"),
    "4.3.6-checkpointSummaryRederived": edit_v3(
        "write", lambda d: d["metric"].update(save_checkpoint_io_mean_GB_per_second=99.0), "summary.json"),
    "4.3.3-checkpointSizeMatchesModel": edit_v3(             # the size in decimal GB, not DLIO's GiB
        "write", lambda d: d["metric"].update(checkpoint_size_GB=d["metric"]["checkpoint_size_GB"] * 2**30 / 1e9),
        "summary.json"),
    "4.7.1-checkpointCacheFlushValidation": _v3_late_read,
    "4.3.2-checkpointFsyncVerification": lambda root: _v3_meta(root, lambda d: d["parameters"]["checkpoint"].update(
        fsync=False)),
    "4.2.2-checkpointClosedProcessCount": lambda root: _v3_meta(root, lambda d: d.update(num_processes=16)),
    "4.6.2-checkpointClosedAcceleratorsPerHost": lambda root: _v3_meta(root, lambda d: d.update(num_processes=2)),
    "4.7.1-checkpointInvocationStructure": lambda root: _v3_meta(root, lambda d: d["parameters"]["checkpoint"].update(
        num_checkpoints_write=3)),
}


def _v3_meta(root, fn) -> None:
    """The write leaf's metadata edited (what the checkpointing judge reads of the invocation)."""
    edit_v3("write", fn, f"checkpointing_{v3_leaf(root, 'write').name}_metadata.json")(root)
