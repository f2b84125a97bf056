"""suite/checkpointing/figures.py: checkpoint figures re-derived from rank records (Hypothesis: figures the
runner's own results code writes re-derive exactly; a run set overall scaled by any factor != 1 does not)."""

import json

from hypothesis import given, settings, strategies as st

from suite.checkpointing import figures as ckpt_figures
from suite.checkpointing import results
from tests.checkpoint_builders import phase

durations = st.lists(st.floats(0.01, 0.9), min_size=3, max_size=3)     # the builder starts one each second


def _phase(tmp, ds):
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    d = phase(tmp, "W", "write", 1_790_000_000.0, runs=3, count=3, processes=8)
    for k, secs in enumerate(ds, start=1):         # each run's rank 0 takes its own time, everything rewritten
        run_dir = d / f"run-{k}"
        p = run_dir / "ranks" / "rank-0.json"
        doc = json.loads(p.read_text())
        for c in doc["checkpoints"]:
            c["duration_s"], c["end_unix_s"] = secs, c["start_unix_s"] + secs
        p.write_text(json.dumps(doc))
        res = json.loads((run_dir / "results.json").read_text())
        res["end_unix_s"] = max(res["end_unix_s"], max(c["end_unix_s"] for c in doc["checkpoints"]))
        results.write_run(run_dir, res, results.load_ranks(run_dir, 8))
    rs = json.loads((d / "checkpoint_run_set.json").read_text())
    done = [json.loads((d / f"run-{k}" / "results.json").read_text()) for k in (1, 2, 3)]
    head = {k: rs[k] for k in ("workload", "phase", "mode", "division", "miniature", "processes", "phase_id")}
    return d, results.write_run_set(d, head, done, 3, ["suite"]), done


def _items(d, rs, done):
    runs = [(d / f"run-{k}" / "results.json", doc) for k, doc in enumerate(done, start=1)]
    derived = {doc["run"]: ckpt_figures.run(p.parent, doc) for p, doc in runs}
    items, _ = ckpt_figures.run_set(d / "checkpoint_run_set.json", rs, runs, derived)
    return items, derived


@settings(max_examples=25, deadline=None)
@given(durations)
def test_what_the_runner_writes_rederives_exactly(tmp_path_factory, ds):
    d, rs, done = _phase(tmp_path_factory.mktemp("f") / "x", ds)
    items, derived = _items(d, rs, done)
    assert items == [] and all(not x.items and not x.rank_items for x in derived.values())


@settings(max_examples=25, deadline=None)
@given(durations, st.floats(0.5, 4.0).filter(lambda f: abs(f - 1) > 1e-6))
def test_a_scaled_overall_is_a_mismatch_with_both_numbers(tmp_path_factory, ds, factor):
    d, rs, done = _phase(tmp_path_factory.mktemp("f") / "x", ds)
    key = "write_throughput_mean_gib_s"
    claimed = rs["overall"][key] * factor
    rs["overall"][key] = claimed
    items, _ = _items(d, rs, done)
    assert [(i.field, i.value, i.expected) for i in items] == [(f"overall.{key}", claimed, claimed / factor)] or \
        (len(items) == 1 and items[0].field == f"overall.{key}" and abs(items[0].expected * factor - claimed) < 1e-9)
