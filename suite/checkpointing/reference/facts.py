"""The facts of one v3.0 checkpointing result in the reference tool's leaves (rules/v3.0/
checkpointing-leaves.yaml names them; declared in suite/checkpointing/facts.yaml) and its row of published figures (4.3.6).
"""

from __future__ import annotations

from suite.layouts import pooled as v3tree
from suite.layouts import pooled_facts
from suite.layouts import solution
from suite.numbers import CLAIMED, RECOMPUTED
from suite.rules.ops import Item
from suite.checkpointing.reference import ckptsize
from suite.checkpointing.reference import ckpttime

GIB = 1 << 30


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
    phases = {x.ts: pooled_facts.checkpoint_phase(x) for x in leaves}
    meta = pooled_facts.meta_of(leaves)
    model = meta.model if meta and meta.model else c.model
    writes = [x for x in leaves if phases[x.ts] in ("write", "combined") and x.summary is not None]
    reads = [x for x in leaves if phases[x.ts] in ("read", "combined") and x.summary is not None]
    again = {x.ts: _rederived(x) for x in writes + reads}
    figs = figures([again[x.ts].metric or x.summary.metric for x in writes],
                                   [again[x.ts].metric or x.summary.metric for x in reads])
    procs = max((x.meta.num_processes for x in leaves if x.meta and x.meta.num_processes is not None), default=None)
    subset = any(x.meta.subset for x in leaves if x.meta is not None)
    facts = {"result.benchmark": "checkpointing", "result.division": org.division,
             "checkpoint.structure": _structure(leaves, phases), "checkpoint.subset": subset,
             "checkpoint.subset_allowed": model == "llama3-8b" and procs == 8,
             "checkpoint.summary_mismatches": [i for a in again.values() for i in a.items]}
    closed = (params.get("checkpoint_closed_processes") or {}).get(model)
    config = (meta.params or {}).get("model") if meta is not None else None     # the model the leaf records
    facts["checkpoint.size_mismatches"] = ckptsize.items(writes + reads, model, procs, subset, params, config)
    facts.update(_ckpt_ties(leaves, phases, {ts: a.metric or next(x.summary.metric for x in writes + reads if x.ts == ts)
                                             for ts, a in again.items()},
                            ckptsize.expected_gib(model, procs, subset, params, config), params))
    facts.update(_ckpt_shape(c, model, phases, procs, params))
    if procs is not None:
        facts["checkpoint.num_processes"] = procs
    if closed is not None:
        facts["checkpoint.closed_processes"] = closed
    w = next((x for x in writes if phases[x.ts] == "write"), None)
    r = next((x for x in reads if phases[x.ts] == "read"), None)
    if w is not None and r is not None and w.ts < r.ts:
        ends = (w.meta.invocation_end if w.meta else None, r.meta.invocation_start if r.meta else None)
        if None not in ends:          # the write invocation's release to the read invocation's start (4.7.1)
            facts["checkpoint.gap_s"] = (ends[1] - ends[0]).total_seconds()
        else:                         # older leaves: the timed sections' end and start
            facts["checkpoint.gap_s"] = (r.summary.start - w.summary.end).total_seconds()
    facts["checkpoint.bookends"] = _bookends(leaves, params.get("checkpoint_invocation_slack_s"))
    _memory(facts, writes + reads, figs)
    _evidence(facts, r or (reads[0] if reads else None), figs)
    out = pooled_facts.row(system, org, "checkpointing", model, c.path)
    out.update(figs)
    out["figures_claimed"] = sorted(ts for ts, a in again.items() if not a.rederivable)   # claimed, not re-derivable
    out["figures"] = CLAIMED if out["figures_claimed"] or not again else RECOMPUTED
    out.update({"processes": procs, "client_hosts": (writes + reads)[0].summary.num_hosts if writes + reads else None,
                "mode": "subset" if subset else "full", "code_image": pooled_facts.code_image(leaves)})
    return facts, phases, out


def _ckpt_ties(leaves: list, phases: dict, metrics: dict, size_gib, params: dict) -> dict:
    """4.3.6 GiB/s = the model's checkpoint / duration; the durations inside the leaf's timed section;
    EVID-02 the hosts' memory records agreeing (suite.checkpointing.reference.ckpttime; tolerances: the round's params)."""
    def num(name, default=0.0):
        v = params.get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default
    return {"checkpoint.bandwidth_mismatches": ckpttime.bandwidth(leaves, phases, metrics, size_gib,
                                                               num("checkpoint_bandwidth_rel_tolerance")),
            "checkpoint.timing": ckpttime.timing(leaves, phases, metrics, num("checkpoint_timing_slack_s"),
                                              num("checkpoint_timed_fraction_min")),
            "checkpoint.memory_contradictions": ckpttime.memory(leaves)}


def _rederived(leaf: v3tree.Leaf):
    """The leaf's DLIO metric from its <r>_per_epoch_stats.json (suite.checkpointing.dlio_ckpt, as the
    checkpointing kind reads its own leaves); a leaf without them keeps its claimed figures."""
    from suite.errors import ResultError
    from suite.rules.ops import Item
    from suite.checkpointing import dlio_ckpt

    try:
        return dlio_ckpt.rederive(leaf.path)
    except ResultError as exc:
        return dlio_ckpt.Rederived(items=[Item(str(exc)[:200], leaf.path, "<r>_per_epoch_stats.json",
                                               expected="readable per-rank records", expected_given=True)])


def _ckpt_shape(c: v3tree.Checkpointing, model: str, phases: dict, procs, params: dict) -> dict:
    """2.1.21/4.3.3 the model, 2.1.23 the leaves, 4.3.1 a combined invocation, 2.1.24 the write's
    duration (the gap it allows: never below the round's checkpoint_gap_floor_s), 4.6.2 processes per host,
    4.6.4 processes against TP x PP."""
    out = {"checkpoint.workload": c.model, "checkpoint.model": model, "checkpoint.leaves": len(c.leaves),
           "checkpoint.combined": "combined" in phases.values()}
    w = next((x for x in c.leaves if phases[x.ts] == "write" and x.summary is not None), None)
    if w is not None:
        out["checkpoint.write_duration_s"] = w.summary.duration_s
        floor = params.get("checkpoint_gap_floor_s")
        floor = floor if isinstance(floor, (int, float)) and not isinstance(floor, bool) else 0
        out["checkpoint.gap_allowed_s"] = max(w.summary.duration_s, floor)
    per_host = [x.meta.num_processes // x.summary.num_hosts for x in c.leaves if x.meta and x.summary
                and x.meta.num_processes is not None and x.summary.num_hosts]
    if per_host:
        out["checkpoint.processes_per_host"] = min(per_host)
    tp_pp = (params.get("checkpoint_tp_pp") or {}).get(model)
    if procs is not None and tp_pp:
        out["checkpoint.tp_pp_remainder"] = procs % tp_pp
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
        facts["checkpoint.data_memory_ratio"] = (size / s.num_hosts) / per_host_mem
        return


def _evidence(facts: dict, read: v3tree.Leaf | None, figs: dict) -> None:
    """A read much faster than its write is suspicious when the read host could cache the checkpoint:
    its own meminfo (MemTotal) holds at least the checkpoint data per host."""
    wr, rd, size = figs.get("write_gib_s"), figs.get("read_gib_s"), figs.get("checkpoint_size_gib")
    if read is None or not wr or rd is None or size is None or read.summary is None:
        return
    s = read.summary
    facts["checkpoint.read_write_ratio"] = rd / wr
    if s.meminfo_total_bytes is None or not s.num_hosts:
        return
    per_host_gib = size / s.num_hosts
    facts["checkpoint.fits_in_cache"] = s.meminfo_total_bytes / GIB >= per_host_gib
    cached = "" if s.meminfo_cached_bytes is None else f", Cached {s.meminfo_cached_bytes / GIB:.1f} GiB"
    facts["checkpoint.cache_evidence"] = (f"read {rd:.2f} GiB/s vs write {wr:.2f} GiB/s; {per_host_gib:.1f} GiB of "
                                       f"checkpoint per host; the read host's meminfo: MemTotal "
                                       f"{s.meminfo_total_bytes / GIB:.1f} GiB{cached}")


def figures(writes: list[dict], reads: list[dict]) -> dict:
    """The published checkpointing figures from the write and read invocations' `metric` blocks."""
    return {
        "write_gib_s": solution.mean([m.get("save_checkpoint_io_mean_GB_per_second") for m in writes]) if writes else None,
        "read_gib_s": solution.mean([m.get("load_checkpoint_io_mean_GB_per_second") for m in reads]) if reads else None,
        "write_duration_s": solution.mean([m.get("save_checkpoint_duration_mean_seconds") for m in writes]) if writes else None,
        "read_duration_s": solution.mean([m.get("load_checkpoint_duration_mean_seconds") for m in reads]) if reads else None,
        "checkpoint_size_gib": solution.mean([m.get("checkpoint_size_GB") for m in writes + reads]) if writes + reads else None,
    }
