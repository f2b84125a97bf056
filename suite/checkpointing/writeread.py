"""`suite run --workload llama3-*` under a round with `checkpoint_invocation: write_read` (v3.0):
MLPerf Storage v3.0 checkpointing.

Without --checkpoints-write/--checkpoints-read: the write (10 checkpoints) and then the read (10) in
ONE invocation (Rules.md 4.7.1's combined invocation); with one of them 0, that phase only (the
two-invocation workflow). Each phase is one run (2.1.24a: one run of 10 checkpoints) in a leaf of
its own, `<results-dir>/checkpointing/<model>/<YYYYMMDD_HHMMSS>/` (suite.checkpointing.leaf),
sampled by suite.checkpointing.timeseries while it runs. Between the write and the read:
the cache clear (4.3.1) with its evidence and the measured write-end -> read-start gap against 30 s
(4.7.1), both in the read run's results.json `handoff` (suite.checkpointing.handoff).

Refusals before anything is touched (exit 2): subset mode for any model but llama3-8b or with other
than 8 processes (4.3.5; mlcommons/storage#841 withdrew ten rows a rules typo had let through), a
closed process count other than Table 2's (4.6.1: 8, 64, 512, 1024), closed checkpoint counts other
than 10 or 0 (Table 3), closed full-size data and results on one file system (4.4.2).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from suite import files, redact
from suite.errors import ExitCode, RuleError
from suite.harness import enforced, leafstamp, resultsdir
from suite.harness.enforced import Series
from suite.rules import rulesets
from suite.checkpointing import handoff as handoff_mod
from suite.checkpointing import leaf
from suite.checkpointing import manifest
from suite.checkpointing import results
from suite.checkpointing import timeseries
from suite.checkpointing import run as ckrun
from suite.harness.storagerun import say

CLOSED_COUNTS = (10, 0)          # Table 3: --num-checkpoints-write/read, closed: only 10 or 0
SUBSET_PROCESSES = 8             # 4.3.5: a subset run is the 8B model with exactly 8 processes
INTERVAL_S, MINIATURE_INTERVAL_S = 10.0, 2.0     # the timeseries' sampling (published: 10 s)


def applies(ruleset: str | None) -> bool:
    """Whether `ruleset` (resolved) writes and reads in one invocation (ruleset.yaml
    `checkpoint_invocation: write_read`, v3.0 and the rounds extending it)."""
    return bool(ruleset) and rulesets.get(ruleset).checkpoint_invocation == "write_read"


def refuse(opts, doc: dict, write: int, read: int) -> None:
    """v3.0's refusals (RuleError, exit 2), before the shared ones of suite.checkpointing.run."""
    if opts.mode == "subset":
        if not doc.get("subset_mode"):
            raise RuleError(f"--mode subset: expected --workload llama3-8b (Rules.md 4.3.5: subset mode is defined for "
                            f"the 8B model only; mlcommons/storage#841 withdrew the rows a rules typo let through), "
                            f"got {opts.workload}")
        if opts.accelerators != SUBSET_PROCESSES:
            raise RuleError(f"--accelerators: expected {SUBSET_PROCESSES} in subset mode (Rules.md 4.3.5: the 8B model "
                            f"with exactly {SUBSET_PROCESSES} processes), got {opts.accelerators}")
    if opts.division == "closed":
        for name, n in (("--checkpoints-write", write), ("--checkpoints-read", read)):
            if n not in CLOSED_COUNTS:
                raise RuleError(f"{name}: expected 10 or 0 in the closed division (Rules.md Table 3), got {n}")


def counts(opts, doc: dict) -> tuple[int, int]:
    """(checkpoints written, read) of this invocation: both the workload's (10) when neither is given."""
    ck = doc["checkpoint"]
    w, r = opts.checkpoints_write, opts.checkpoints_read
    if w is None and r is None:
        return ck["num_checkpoints_write"], ck["num_checkpoints_read"]
    return (ck["num_checkpoints_write"] if w is None else w), (ck["num_checkpoints_read"] if r is None else r)


class Phase(ckrun.Checkpointing):
    """One phase into its leaf. A read after a write of the same invocation clears the cache through
    the handoff (no second probe); a read's results.json gets the handoff record."""

    def __init__(self, opts, ho: "handoff_mod.Handoff | None" = None, write_end: float | None = None,
                 probe: bool = True):
        super().__init__(opts)
        self.handoff, self.write_end, self.probe = ho, write_end, probe

    def prepare(self) -> Series:
        opts = self.opts
        self.prep = ckrun.prepare(opts)
        backend_clear = ckrun.cache_clear(self.prep)       # across hosts: every host's page cache
        clear = backend_clear
        if self.prep.phase == "write" and self.probe and self.prep.cluster is None:   # across: hosts.connect asked
            enforced.refuse_without_clear(backend_clear, opts.division, opts.allow_no_cache_drop)
        if self.prep.phase == "read":       # no probe: the handoff's clear is the first, its evidence intact
            self.handoff = self.handoff or _handoff(self.prep)
            clear = self._handoff_clear(backend_clear)
        return Series(name=ckrun.results_name(opts, self.prep.phase), results_dir=opts.results_dir,
                      runs=self.prep.runs, clear_cache=None if opts.no_cache_drop else clear,
                      write_run_set=self.write_run_set, started=self.started,
                      host_metrics_cluster=self.prep.cluster)       # across hosts: every host sampled

    def _handoff_clear(self, backend_clear):
        """The read's clear through the handoff; closed without permission: refused (the claimed leaf
        is abandoned by the harness, as a failed probe would have been refused before it)."""
        opts = self.opts

        def clear():
            drop = self.handoff.clear(backend_clear)
            if not drop.succeeded and opts.division == "closed" and not opts.allow_no_cache_drop:
                raise RuleError(f"cache drop: expected permission to clear the cache before the read (closed "
                                f"division, Rules.md 4.3.1), got {drop.error} (use --allow-no-cache-drop or "
                                f"--division open; either makes the run non-compliant)")
            return drop
        return clear

    def run_once(self, k: int, drop) -> dict:
        doc = ckrun.run_once(self.prep, k, drop)
        if self.prep.phase == "read" and k == 1:
            end = self.write_end if self.write_end is not None else (self.prep.written_by or {}).get("end_unix_s")
            if end is not None:
                doc["handoff"] = self.handoff.record(float(end), doc["start_unix_s"])
                files.write_json(self.prep.results_dir / f"run-{k}" / results.RESULTS, doc, schema="checkpoint-results")
        return doc


def _handoff(prep) -> "handoff_mod.Handoff":
    """What the read will clear and why: its files, the bytes each client wrote, a client's memory.
    On object storage no file of the checkpoint is in this client's page cache to measure: no files."""
    from suite.storage.backend.select import ObjectLocation
    from suite.checkpointing.rank import checkpoint_dir

    paths = [] if isinstance(prep.folder, ObjectLocation) else [
        checkpoint_dir(prep.folder, k) / s.name for k in range(1, prep.count + 1)
        for r in range(prep.opts.accelerators) for s in prep.ckpt.rank_shards(r)]
    written = (prep.written_by or {}).get("checkpoints", prep.count) * prep.ckpt.total_bytes
    if prep.cluster is not None:     # each client's memory from its probe (the cgroup's limit where lower); the smallest
        memory = min(min(h.mem_total_bytes, prep.opts.memory_limit or h.mem_total_bytes) for h in prep.cluster.hosts)
        return handoff_mod.Handoff(paths, written // len(prep.cluster.hosts), memory, scope=ckrun.residency_scope(prep))
    return handoff_mod.Handoff(paths, written // max(len(prep.hosts), 1),
                               handoff_mod.client_memory_bytes(prep.opts.memory_limit))


def run(opts, made: list | None = None) -> int:
    """The v3.0 invocation: its phases, each into a new leaf (appended to `made`); the exit code (1:
    the read broke 4.7.1)."""
    from suite.checkpointing import workloads

    doc = workloads.load(opts.workload)
    w, r = counts(opts, doc)
    refuse(opts, doc, w, r)
    phases = [("write", w)] * bool(w) + [("read", r)] * bool(r)
    if not phases:
        raise RuleError("--checkpoints-write/--checkpoints-read: expected one of them above 0, got both 0")
    base = replace(opts, runs=opts.runs or 1)
    base = replace(base, data=base.data or ckrun.location(base))     # the folder resolved once, for every phase
    # without --results-dir: a fresh claimed ./results/<model>-<N>p-<UTC time>, as every kind's run
    name = f"{opts.workload}-{opts.accelerators}p"
    where = Path(opts.results_dir or resultsdir.default(name)) / "checkpointing" / opts.workload
    prep = ckrun.prepare(_phase_opts(base, phases[0], where / leafstamp.now()))   # every refusal; nothing written
    base = replace(base, cluster=prep.cluster)          # across hosts: probed once, for every phase
    _separation(doc, prep)
    root = Path(opts.results_dir) if opts.results_dir else resultsdir.claim(None, name)
    try:
        return _phases(base, doc, phases, root / "checkpointing" / opts.workload, made)
    finally:
        if not opts.results_dir:
            resultsdir.release(root)


def _phases(base, doc: dict, phases: list, parent: Path, made: list | None) -> int:
    """Each phase into a new leaf under `parent`; the exit code (1: the read broke 4.7.1)."""
    parent.mkdir(parents=True, exist_ok=True)
    write_end, ok = None, True
    for i, ph in enumerate(phases):
        kind = Phase(_phase_opts(base, ph, leaf.new_leaf(parent)), write_end=write_end, probe=i == 0)
        done = _run_phase(kind, doc)
        made.append(Path(kind.opts.results_dir)) if made is not None else None
        if ph[0] == "write":
            write_end = done[-1]["end_unix_s"]
        elif done and done[0].get("handoff"):
            ok = _say_handoff(done[0]["handoff"])
    return ExitCode.OK if ok else ExitCode.FAILED


def _phase_opts(base, ph: tuple[str, int], where: Path):
    name, n = ph
    return replace(base, checkpoints_write=n if name == "write" else 0, checkpoints_read=n if name == "read" else 0,
                   results_dir=str(where))


def _run_phase(kind: Phase, doc: dict) -> list[dict]:
    """One phase: the runs (enforced harness) under the timeseries sampler, then the leaf's files."""
    from suite.storage import separation

    opts = kind.opts
    interval = MINIATURE_INTERVAL_S if opts.data_dir is None else INTERVAL_S
    with timeseries.Sampler(interval) as sampler:
        _series, done = enforced.run(kind)
    prep = kind.prep
    if prep.phase == "write":
        manifest.write(prep.folder, {**ckrun.layout(opts, prep.ckpt), "checkpoints": prep.count, "fsync": ckrun.fsync(prep),
                                     "results_dir": str(prep.results_dir), "end_unix_s": done[-1]["end_unix_s"],
                                     "write_id": prep.phase_id})
    run_dir = prep.results_dir / "run-1"
    first = files.load_json(run_dir / results.RESULTS, schema="checkpoint-results")
    leaf.decorate(prep.results_dir, first, results.load_ranks(run_dir, opts.accelerators), leaf.overrides_of(first),
                  list(redact.command(sys.argv)), sampler)
    separation.write(prep.results_dir, separation.probe(doc, prep.data, prep.results_dir))
    m = (done[-1].get("metric") or {}).get(prep.phase) or {}
    say(f"{prep.phase} leaf: {prep.results_dir}: {m.get('duration_mean_s', 0):.3f} s per checkpoint, "
        f"{m.get('throughput_mean_gib_s', 0):.3f} GiB/s" + ("; MINIATURE, not valid for submission" if prep.ckpt.miniature else ""))
    return done


def _separation(doc: dict, prep) -> None:
    """4.4.2: closed and full size, checkpoints and results on one file system is refused up front."""
    from suite.storage import separation

    probe = separation.probe(doc, prep.data, prep.results_dir)
    why = separation.refuse(probe, prep.opts.division, prep.ckpt.miniature)
    if why:
        say(f"note: {why} (recorded in fs_separation.json; not valid for a closed submission)")


def _say_handoff(h: dict) -> bool:
    c = h["cache_clear"]
    say(f"handoff: 4.3.1 {'requires' if h['clear_required'] else 'does not require'} a cache clear (checkpoint data "
        f"per client {h['checkpoint_bytes_per_client'] / 2**30:.3f} GiB = {h['ratio']:.4f} x client memory "
        f"{h['client_memory_bytes'] / 2**30:.1f} GiB); cleared: {c.get('succeeded')} ({c.get('method')}), page cache "
        f"of the checkpoint files {c.get('resident_bytes_before', 0):,} -> {c.get('resident_bytes_after', 0):,} bytes")
    verdict = "within" if h["within_window"] else "BREAKS Rules.md 4.7.1:"
    say(f"handoff: the read started {h['gap_s']:.3f} s after the write ended ({verdict} the {h['window_s']:g} s window)")
    return h["within_window"]
