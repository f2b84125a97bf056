"""The facts of one v3.0 training or checkpointing result (rules/v3.0/tree/*.yaml name them; they are
declared in rules/facts.yaml) and the row of published columns it contributes (suite.published.figures).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from suite.numbers import CLAIMED, RECOMPUTED
from suite.published import leaf as v3load
from suite.harness import leafstamp

from suite.published import ckptsize
from suite.published import ckpttime
from suite.published import derive as v3derive
from suite.published import tree as v3tree
from suite.rules.ops import Item
from suite.published import figures as v3figures
from suite.published import throughput as v3throughput

GIB = 1 << 30


def row(system: v3tree.System, org: v3tree.Org, benchmark: str, model: str, path: Path) -> dict:
    """The columns a published row has beside its figures: the system under test's."""
    doc = system.doc or {}
    sol = v3figures.solution(doc)
    return {"division": org.division, "org": org.name, "system": system.name, "benchmark": benchmark,
            "model": model, "path": str(path), "availability": sol["availability"],
            "usable_capacity_tib": sol["usable_capacity_tib"], "int_client_store_tib": sol["int_client_store_tib"],
            "provisioned_power_w": v3figures.provisioned_power_w(doc), "rack_units": v3figures.rack_units(doc),
            "deployment": sol["deployment"], "storage_location": sol["storage_location"],
            "benchmark_api": sol["benchmark_api"], "sut_type": sol["sut_type"],
            "access_protocol": sol["access_protocol"]}


def code_image(leaves) -> str | None:
    """The code image (32-hex hash) the first leaf with a `.mlps-code-image` pointer names."""
    return next((x.pointer[1] for x in leaves if getattr(x, "pointer", None)), None)


def _meta(leaves) -> v3load.Metadata | None:
    return next((x.meta for x in leaves if x.meta is not None), None)


def _order(runs: list) -> list:
    """Run directories that are no timestamp, or whose runs started out of their lexical order."""
    out = [Item(r.ts, r.path, "(directory name)", "YYYYMMDD_HHMMSS") for r in runs if not leafstamp.is_stamp(r.ts)]
    timed = [r for r in runs if r.summary is not None]
    for a, b in zip(timed, timed[1:]):
        if b.summary.start < a.summary.start:
            out.append(Item(b.summary.start.isoformat(), b.path / "summary.json", "start",
                            f"after {a.ts}'s start ({a.summary.start.isoformat()}): the lexically earlier run "
                            "ran first, the warm-up being the earliest"))
    return out


def training(t: v3tree.Training, org, system, params: dict, round_name: str = ""):
    """(benchmark facts, [(leaf, phase, measured, leaf facts)], row). Every figure a rule reads is
    re-derived from the evidence (suite.published.derive); what cannot be is a fact of its own."""
    runs = t.runs
    meta = _meta(runs)
    model = (meta.model if meta and meta.model else t.model)
    datasize_meta = _meta(list(reversed(t.datasize)))
    ds_files = datasize_meta.num_files_train if datasize_meta else None
    au_min = (params.get("v3_au_min_pct") or {}).get(model)
    leaf_facts = []
    for i, r in enumerate(runs):
        f = {}
        s = r.summary
        if s is not None:
            f["v3.duration_s"] = s.duration_s
            nxt = runs[i + 1].summary if i + 1 < len(runs) else None
            if nxt is not None:
                f["v3.gap_to_next_s"] = (nxt.start - s.end).total_seconds()
            f["v3.num_files_train"] = s.num_files_train
            own = r.meta or meta
            f["v3.datasize.short"] = v3derive.dataset_short(s, own.params if own else None, round_name)
            f.update(_throughput(s, own.params if own else None, params))
            if i > 0:
                derived, f["v3.au.problems"] = v3derive.au(s)
                if derived is not None:
                    f["v3.au_mean_pct"] = derived
        if ds_files is not None:
            f["v3.datasize_files"] = ds_files
        if au_min is not None:
            f["v3.au_min_pct"] = float(au_min)
        leaf_facts.append((r, "run", i > 0, f))
    leaf_facts += [(x, "datasize", False, {}) for x in t.datasize] + [(x, "datagen", False, {}) for x in t.datagen]
    facts = {"v3.benchmark": "training", "v3.division": org.division, "v3.runs.count": len(runs),
             "v3.runs.order": _order(runs), "v3.datasize.present": bool(t.datasize),
             "v3.runs.num_files_train": [Item(r.summary.num_files_train, r.path / "summary.json", "num_files_train")
                                         for r in runs if r.summary is not None]}
    facts.update(_phases(t, ds_files))
    facts.update(v3derive.runs_problems(runs))
    with_meta = [r for r in runs if r.meta is not None]
    facts["v3.closed.values"] = [i for r in with_meta for i in v3derive.closed_values(r.meta, r.meta.params)] \
        if with_meta else v3derive.closed_values(None, None)
    firsts = [r.summary for r in runs if r.summary is not None]
    if firsts and all(s.num_hosts == 1 for s in firsts) and firsts[0].num_accelerators is not None:
        facts["v3.single_host_accelerators"] = firsts[0].num_accelerators
    measured = [r.summary.metric for r in runs[1:] if r.summary is not None]
    out = row(system, org, "training", model, t.path)
    out.update(v3figures.training(measured))
    out["figures"] = CLAIMED              # the summaries' figures, as the round's tables publish them (its checks re-derive)
    out.update({"accelerator": meta.accelerator if meta else None,
                "accelerators": firsts[-1].num_accelerators if firsts else None,
                "client_hosts": firsts[-1].num_hosts if firsts else None, "runs_found": len(runs),
                "code_image": code_image(runs + t.datasize + t.datagen)})
    return facts, leaf_facts, out


def _throughput(s, dlio: dict | None, params: dict) -> dict:
    """3.3.8: the run's samples/s, MiB/s and AU tied to each other and to its accelerators' 100 %-AU rate
    (suite.published.throughput; the tolerances are the round's params)."""
    def tol(name):
        v = params.get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
    return {"v3.throughput.bound": v3throughput.bound(s, dlio, tol("v3_throughput_bound_tolerance")),
            "v3.throughput.bytes": v3throughput.bytes_agree(s, dlio, tol("v3_throughput_io_rel_tolerance")),
            "v3.throughput.au": v3throughput.au_agree(s, dlio, tol("v3_throughput_au_tolerance_pct"))}


def _phases(t: v3tree.Training, ds_files) -> dict:
    """2.1.11 the workload folder, 2.1.13 the datagen leaves, 3.2.1 what datagen generated against what
    datasize sized, 3.3.6 runs whose accelerators do not divide evenly over their hosts."""
    out = {"v3.training.workload": t.model, "v3.datagen.count": len(t.datagen),
           "v3.runs.uneven_accelerators": [
               Item(f"{s.num_accelerators} accelerators on {s.num_hosts} hosts", r.path / "summary.json",
                    "num_accelerators", "a multiple of num_hosts (the same accelerators on every host)")
               for r in t.runs for s in [r.summary]
               if s is not None and s.num_hosts and s.num_accelerators is not None and s.num_accelerators % s.num_hosts]}
    gen = _meta(list(reversed(t.datagen)))
    if gen is not None and gen.num_files_train is not None:
        out["v3.datagen.num_files_train"] = gen.num_files_train
    if ds_files is not None:
        out["v3.datasize.num_files_train"] = ds_files
    return out


def leaf_facts(leaf: v3tree.Leaf) -> dict:
    """A leaf's own facts from its metadata and fs_separation.json: what it overrode (3.6.2, 3.6.3,
    4.6.3), whether its data and results paths are one (3.4.1, 4.4.1), checkpoint fsync (4.3.2)."""
    out = {}
    m = leaf.meta
    if m is not None:
        out["v3.overrides"] = [Item(k, m.path, "override_parameters") for k in m.override_keys]
        if m.fsync is not None:
            out["v3.ckpt.fsync"] = m.fsync
    fs = leaf.fs
    if fs is not None and fs.data_path and fs.results_path:
        d, r = PurePosixPath(fs.data_path), PurePosixPath(fs.results_path)
        out["v3.paths.shared"] = d == r or d in r.parents or r in d.parents
        out["v3.fs.contradicts"] = _fs_contradicts(leaf, d, r)
    return out


def _fs_contradicts(leaf: v3tree.Leaf, data: PurePosixPath, results: PurePosixPath) -> list:
    """fs_separation.json's paths against what the run's metadata says it read and wrote: the data
    folder lies under the data path, the leaf's result_dir under the results path (3.4.1, 4.4.1)."""
    m, out = leaf.meta, []
    if m is None:
        return out
    for got, base, name in ((m.data_folder, data, "parameters.dataset.data_folder"),
                            (m.result_dir, results, "result_dir")):
        if got and not (PurePosixPath(got) == base or base in PurePosixPath(got).parents):
            out.append(Item(got, m.path, name, f"a path under {base} (fs_separation.json)"))
    return out


def _phase(leaf: v3tree.Leaf) -> str:
    m = leaf.meta
    if m is not None and m.num_checkpoints_write is not None and m.num_checkpoints_read is not None:
        w, r = m.num_checkpoints_write, m.num_checkpoints_read
        return "combined" if w and r else "write" if w else "read" if r else "none"
    keys = set(leaf.summary.metric) if leaf.summary is not None else set()
    w = any(k.startswith("save_checkpoint") for k in keys)
    r = any(k.startswith("load_checkpoint") for k in keys)
    return "combined" if w and r else "write" if w else "read" if r else "none"


def _structure(leaves: list, phases: dict) -> list:
    got = [phases[x.ts] for x in leaves]
    out = []
    shape = "one combined leaf, or a write leaf then a read leaf"
    if got not in (["combined"], ["write", "read"]):
        out.append(Item(", ".join(f"{x.ts}: {phases[x.ts]}" for x in leaves) or "no leaves",
                        leaves[0].path.parent if leaves else None, "(leaves)", shape))
    for x in leaves:
        m = x.meta
        if m is None or m.num_checkpoints_write is None or m.num_checkpoints_read is None:
            continue
        want = {"combined": (10, 10), "write": (10, 0), "read": (0, 10)}.get(phases[x.ts])
        if want and (m.num_checkpoints_write, m.num_checkpoints_read) != want:
            out.append(Item(f"{m.num_checkpoints_write} writes, {m.num_checkpoints_read} reads", m.path,
                            "parameters.checkpoint.num_checkpoints_{write,read}", f"{want[0]} writes, {want[1]} reads"))
    return out


def checkpointing(c: v3tree.Checkpointing, org, system, params: dict):
    """(benchmark facts, {leaf ts: phase}, row)."""
    leaves = c.leaves
    phases = {x.ts: _phase(x) for x in leaves}
    meta = _meta(leaves)
    model = meta.model if meta and meta.model else c.model
    writes = [x for x in leaves if phases[x.ts] in ("write", "combined") and x.summary is not None]
    reads = [x for x in leaves if phases[x.ts] in ("read", "combined") and x.summary is not None]
    again = {x.ts: _rederived(x) for x in writes + reads}
    figs = v3figures.checkpointing([again[x.ts].metric or x.summary.metric for x in writes],
                                   [again[x.ts].metric or x.summary.metric for x in reads])
    procs = max((x.meta.num_processes for x in leaves if x.meta and x.meta.num_processes is not None), default=None)
    subset = any(x.meta.subset for x in leaves if x.meta is not None)
    facts = {"v3.benchmark": "checkpointing", "v3.division": org.division,
             "v3.ckpt.structure": _structure(leaves, phases), "v3.ckpt.subset": subset,
             "v3.ckpt.subset_allowed": model == "llama3-8b" and procs == 8,
             "v3.ckpt.summary_mismatches": [i for a in again.values() for i in a.items]}
    closed = (params.get("v3_ckpt_closed_processes") or {}).get(model)
    facts["v3.ckpt.size_mismatches"] = ckptsize.items(writes + reads, model, procs, subset, params)
    facts.update(_ckpt_ties(leaves, phases, {ts: a.metric or next(x.summary.metric for x in writes + reads if x.ts == ts)
                                             for ts, a in again.items()},
                            ckptsize.expected_gib(model, procs, subset, params), params))
    facts.update(_ckpt_shape(c, model, phases, procs, params))
    if procs is not None:
        facts["v3.ckpt.num_processes"] = procs
    if closed is not None:
        facts["v3.ckpt.closed_processes"] = closed
    w = next((x for x in writes if phases[x.ts] == "write"), None)
    r = next((x for x in reads if phases[x.ts] == "read"), None)
    if w is not None and r is not None and w.ts < r.ts:
        ends = (w.meta.invocation_end if w.meta else None, r.meta.invocation_start if r.meta else None)
        if None not in ends:          # the write invocation's release to the read invocation's start (4.7.1)
            facts["v3.ckpt.gap_s"] = (ends[1] - ends[0]).total_seconds()
        else:                         # older leaves: the timed sections' end and start
            facts["v3.ckpt.gap_s"] = (r.summary.start - w.summary.end).total_seconds()
    facts["v3.ckpt.bookends"] = _bookends(leaves, params.get("v3_ckpt_invocation_slack_s"))
    _memory(facts, writes + reads, figs)
    _evidence(facts, r or (reads[0] if reads else None), figs)
    out = row(system, org, "checkpointing", model, c.path)
    out.update(figs)
    out["figures_claimed"] = sorted(ts for ts, a in again.items() if not a.rederivable)   # claimed, not re-derivable
    out["figures"] = CLAIMED if out["figures_claimed"] or not again else RECOMPUTED
    out.update({"processes": procs, "client_hosts": (writes + reads)[0].summary.num_hosts if writes + reads else None,
                "mode": "subset" if subset else "full", "code_image": code_image(leaves)})
    return facts, phases, out


def _ckpt_ties(leaves: list, phases: dict, metrics: dict, size_gib, params: dict) -> dict:
    """4.3.6 GiB/s = the model's checkpoint / duration; the durations inside the leaf's timed section;
    EVID-02 the hosts' memory records agreeing (suite.published.ckpttime; tolerances: the round's params)."""
    def num(name, default=0.0):
        v = params.get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default
    return {"v3.ckpt.bandwidth_mismatches": ckpttime.bandwidth(leaves, phases, metrics, size_gib,
                                                               num("v3_ckpt_bandwidth_rel_tolerance")),
            "v3.ckpt.timing": ckpttime.timing(leaves, phases, metrics, num("v3_ckpt_timing_slack_s"),
                                              num("v3_ckpt_timed_fraction_min")),
            "v3.ckpt.memory_contradictions": ckpttime.memory(leaves)}


def _rederived(leaf: v3tree.Leaf):
    """The leaf's DLIO metric from its <r>_per_epoch_stats.json (suite.storage.dlio_ckpt, as the
    checkpointing kind reads its own leaves); a leaf without them keeps its claimed figures."""
    from suite.errors import ResultError
    from suite.rules.ops import Item
    from suite.storage import dlio_ckpt

    try:
        return dlio_ckpt.rederive(leaf.path)
    except ResultError as exc:
        return dlio_ckpt.Rederived(items=[Item(str(exc)[:200], leaf.path, "<r>_per_epoch_stats.json",
                                               expected="readable per-rank records", expected_given=True)])


def _ckpt_shape(c: v3tree.Checkpointing, model: str, phases: dict, procs, params: dict) -> dict:
    """2.1.21/4.3.3 the model, 2.1.23 the leaves, 4.3.1 a combined invocation, 2.1.24 the write's
    duration, 4.6.2 processes per host, 4.6.4 processes against TP x PP."""
    out = {"v3.ckpt.workload": c.model, "v3.ckpt.model": model, "v3.ckpt.leaves": len(c.leaves),
           "v3.ckpt.combined": "combined" in phases.values()}
    w = next((x for x in c.leaves if phases[x.ts] == "write" and x.summary is not None), None)
    if w is not None:
        out["v3.ckpt.write_duration_s"] = w.summary.duration_s
    per_host = [x.meta.num_processes // x.summary.num_hosts for x in c.leaves if x.meta and x.summary
                and x.meta.num_processes is not None and x.summary.num_hosts]
    if per_host:
        out["v3.ckpt.processes_per_host"] = min(per_host)
    tp_pp = (params.get("v3_ckpt_tp_pp") or {}).get(model)
    if procs is not None and tp_pp:
        out["v3.ckpt.tp_pp_remainder"] = procs % tp_pp
    return out


def _bookends(leaves: list, slack_s) -> list:
    """4.7.1: mlpstorage's invocation bookends hold the timed section DLIO recorded (summary start and
    end) with at most `slack_s` of set-up before and tear-down after it; bookends that do not are
    forged or from another invocation, and the gap read from them lies."""
    out = []
    for x in leaves:
        m, s = x.meta, x.summary
        if m is None or s is None or m.invocation_start is None or m.invocation_end is None:
            continue
        before = (s.start - m.invocation_start).total_seconds()
        after = (m.invocation_end - s.end).total_seconds()
        if before < 0 or after < 0 or (slack_s is not None and max(before, after) > slack_s):
            out.append(Item(f"{m.invocation_start.isoformat()} .. {m.invocation_end.isoformat()} ({before:.0f} s "
                            f"before, {after:.0f} s after)", m.path, "invocation_start_time, invocation_end_time",
                            f"an invocation holding its timed section {s.start.isoformat()} .. {s.end.isoformat()} "
                            f"with at most {slack_s} s before and after it"))
    return out


def _memory(facts: dict, leaves: list, figs: dict) -> None:
    """4.3.1: checkpoint data per host against the host's memory (the sum of host_memory_GB over hosts)."""
    size = figs.get("checkpoint_size_gib")
    for x in leaves:
        s = x.summary
        if size is None or not s.num_hosts or not s.host_memory_gib or sum(s.host_memory_gib) <= 0:
            continue
        per_host_mem = sum(s.host_memory_gib) / s.num_hosts
        facts["v3.ckpt.data_memory_ratio"] = (size / s.num_hosts) / per_host_mem
        return


def _evidence(facts: dict, read: v3tree.Leaf | None, figs: dict) -> None:
    """A read much faster than its write is suspicious when the read host could cache the checkpoint:
    its own meminfo (MemTotal) holds at least the checkpoint data per host."""
    wr, rd, size = figs.get("write_gib_s"), figs.get("read_gib_s"), figs.get("checkpoint_size_gib")
    if read is None or not wr or rd is None or size is None or read.summary is None:
        return
    s = read.summary
    facts["v3.ckpt.read_write_ratio"] = rd / wr
    if s.meminfo_total_bytes is None or not s.num_hosts:
        return
    per_host_gib = size / s.num_hosts
    facts["v3.ckpt.fits_in_cache"] = s.meminfo_total_bytes / GIB >= per_host_gib
    cached = "" if s.meminfo_cached_bytes is None else f", Cached {s.meminfo_cached_bytes / GIB:.1f} GiB"
    facts["v3.ckpt.cache_evidence"] = (f"read {rd:.2f} GiB/s vs write {wr:.2f} GiB/s; {per_host_gib:.1f} GiB of "
                                       f"checkpoint per host; the read host's meminfo: MemTotal "
                                       f"{s.meminfo_total_bytes / GIB:.1f} GiB{cached}")
