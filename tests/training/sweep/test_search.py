"""`suite sweep` for real (mpiexec ranks, real cache drops, the page-cache ceiling) on a tiny
dataset, and the find-max search on its own."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from suite import files
from suite.training.sweep import result
from suite.training.sweep.search import find_max
from tests.training.run.test_runner import make_data

# tiny records, 2 epochs, a compute time long enough that AU is not all MPI start-up; the AU
# threshold lowered (metric.au) so a loaded 2-core host still meets it: the test is about the sweep
TINY = ["dataset.num_samples_per_file=20", "dataset.record_length=1000", "dataset.record_length_stdev=0",
        "reader.batch_size=8", "train.epochs=2", "train.computation_time=0.02", "metric.au=0.5"]


def tiny_args(tmp: Path) -> list:
    out = []
    for p in TINY + [f"checkpoint.checkpoint_folder={tmp / 'ckpt'}"]:
        out += ["--param", p]
    return out


# --------------------------------------------------------------------------- the search alone


def recorder(largest_ok: int):
    probes = []

    def probe(n, phase):
        probes.append((n, phase))
        return n <= largest_ok
    return probes, probe


@pytest.mark.parametrize("largest_ok, start, limit, answer, probed", [
    (11, 1, 64, 11, [1, 2, 4, 8, 16, 12, 10, 11]),
    (16, 1, 64, 16, [1, 2, 4, 8, 16, 32, 24, 20, 18, 17]),
    (100, 1, 20, 20, [1, 2, 4, 8, 16, 20]),              # never fails: stops at the limit
    (0, 1, 64, 0, [1]),                                  # even one accelerator is too many
    (5, 12, 64, 5, [12, 6, 3, 4, 5]),                    # a start past the answer bisects down
    (7, 7, 64, 7, [7, 14, 10, 8]),
])
def test_find_max_doubles_then_bisects(largest_ok, start, limit, answer, probed):
    probes, probe = recorder(largest_ok)
    assert find_max(probe, start, limit) == answer
    assert [n for n, _ in probes] == probed
    phases = [ph for _, ph in probes]
    assert phases == sorted(phases, key=lambda ph: ph != "doubling")     # doubling first, then bisection


@pytest.mark.parametrize("largest_ok, first, limit, floors, answer, probed", [
    (62, 62, 64, {}, 62, [62, 63]),                        # resnet50 on 40 files: the bracket and its neighbour
    (64, 64, 64, {}, 64, [64]),                            # the bracket is the limit and meets
    (61, 62, 64, {}, 61, [62, 61]),                        # a near miss: one step down
    (57, 62, 64, {}, 57, [62, 61, 59, 55, 56, 58, 57]),    # steps 1, 2, 4 down, then up, then bisection
    (9, 62, 64, {62: 10}, 9, [62, 10, 9]),                 # a far miss: straight to the jump, then steps of 1
    (43, 62, 64, {55: 44}, 43, [62, 61, 59, 55, 44, 43]),  # 03:05 under load: 55 far below, 44 a near miss
    (20, 62, 64, {62: 12}, 20, [62, 12, 13, 15, 19, 27, 23, 21, 20]),
    (0, 4, 64, {}, 0, [4, 3, 1]),                          # even one accelerator is too many
])
def test_find_max_from_a_bracket_gallops_then_bisects(largest_ok, first, limit, floors, answer, probed):
    probes, probe = recorder(largest_ok)
    assert find_max(probe, 1, limit, first=first, floor=floors.get) == answer
    assert [n for n, _ in probes] == probed
    assert probes[0][1] == "bracket" and {ph for _, ph in probes[1:]} <= {"gallop", "bisection"}


@given(largest_ok=st.integers(0, 80), first=st.integers(1, 80), limit=st.integers(1, 80),
       floors=st.dictionaries(st.integers(1, 80), st.integers(-5, 90)), guessed=st.booleans())
@settings(deadline=None)      # pure search, no I/O: a loaded 2-core host stretched an example past 200 ms
def test_a_bracketed_search_finds_what_the_full_search_finds(largest_ok, first, limit, floors, guessed):
    """Where AU falls with N (a largest N that meets), the bracket, any floor and any guess end on
    the N that doubling and halving from 1 find."""
    full = find_max(recorder(largest_ok)[1], 1, limit)
    guess = (lambda g, b: (g + 2 * b) // 3) if guessed else None
    probes, probe = recorder(largest_ok)
    assert find_max(probe, 1, limit, guess, first=first, floor=floors.get) == full == min(largest_ok, limit)
    assert all(1 <= n <= limit for n, _ in probes) and len(probes) == len(set(probes))


# --------------------------------------------------------------------------- real sweeps


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("sweep") / "data", "resnet50", TINY, 12)


@pytest.mark.timeout(240)
def test_find_max_with_ceiling_confirms_with_five_runs(run_cli, tiny_data, tmp_path):
    out = tmp_path / "sweep"
    code, stdout, err = run_cli("sweep", "--workload", "resnet50", "--find-max", "--max-accelerators", 2,
                                "--ceiling", "--data-dir", tiny_data, "--results-dir", out, "--division", "open",
                                *tiny_args(tmp_path))
    assert code == 0, err
    doc = result.load(out)                       # schema-checked on the way in (and on every write)
    # 12 files x 20 samples: epochs keep 2+ steps of 8 up to N = 15, so the bracket is the limit, 2
    assert [(p["accelerators"], p["phase"]) for p in doc["probes"]] == [(2, "bracket")]
    ans = doc["max_accelerators"]
    assert ans["accelerators"] == 2 and ans["confirmed"] and ans["confirm_runs"] == 5
    assert len(ans["au_per_run"]) == 5 and all(a >= 50 for a in ans["au_per_run"])
    assert sorted(p.name for p in (out / "N2-confirm").glob("run-*")) == [f"run-{k}" for k in range(1, 6)]
    assert "maximum N at AU >= 50%: 2 (confirmed by 5 runs" in stdout
    for p in doc["points"]:
        st, ce = p["storage"], p["ceiling"]
        assert st["kind"] == "storage" and ce["kind"] == "ceiling"
        # the first epoch vs the later one: both measured, the ratio is theirs
        assert st["first_to_later_ratio"] == pytest.approx(
            st["first_epoch_samples_per_second"] / st["later_epochs_samples_per_second"])
        assert p["storage_to_ceiling"] == pytest.approx(st["samples_per_second"] / ce["samples_per_second"])
        # the ceiling read the storage run's files into the page cache, and ran without a drop, open
        assert ce["preread"]["bytes"] == sum(f.stat().st_size for f in (tiny_data / "train").iterdir())
        assert ce["preread"]["resident_fraction"] == pytest.approx(1.0, abs=0.05)
        assert 0 <= ce["preread"]["resident_fraction_after"] <= 1
        run = files.load_json(out / ce["results_dir"] / "run-1" / "results.json", schema="results")
        assert run["division"] == "open" and run["enforcement"]["cache_drop"]["attempted"] is False
        run = files.load_json(out / st["results_dir"] / "run-1" / "results.json", schema="results")
        assert run["enforcement"]["cache_drop"]["succeeded"] is True             # root here: a real drop
    assert doc["host"]["cpu_count"] >= 1 and len(doc["host"]["load_average_end"]) == 3


@pytest.mark.timeout(120)
def test_a_list_sweep_writes_one_point_per_n_in_order(run_cli, tiny_data, tmp_path):
    out = tmp_path / "sweep"
    code, stdout, err = run_cli("sweep", "--workload", "resnet50", "--accelerators", "2,1", "--data-dir", tiny_data,
                                "--results-dir", out, "--division", "open", *tiny_args(tmp_path))
    assert code == 0, err
    doc = json.loads((out / "sweep.json").read_text())
    assert [p["accelerators"] for p in doc["points"]] == [1, 2] and doc["mode"] == "list"
    assert doc["probes"] == [] and doc["max_accelerators"] is None and doc["ceiling"] is False
    assert all(p["ceiling"] is None and p["storage_to_ceiling"] is None for p in doc["points"])
    assert {p.name for p in out.iterdir()} == {"N1-storage", "N2-storage", "sweep.json"}


@pytest.mark.parametrize("argv, needle", [
    (["--accelerators", "1,2", "--find-max"], "--accelerators/--find-max: expected one of them"),
    ([], "--accelerators/--find-max: expected one of them"),
    (["--accelerators", "1,1"], "expected each accelerator count once"),
    (["--accelerators", "1,x"], "expected a positive integer, got 'x'"),
    (["--find-max", "--runs", "3"], "--runs: expected 1 or 5 (the ruleset's runs.count), got 3"),
    (["--accelerators", "0,2"], "expected a positive integer up to"),
    (["--accelerators", "1,,2"], "expected a positive integer, got ''"),
    (["--accelerators", "9" * 400], "expected a positive integer up to"),
    (["--accelerators", ",".join(map(str, range(1, 70)))], "expected at most 64 accelerator counts, got 69"),
    (["--find-max", "--max-accelerators", "-1"], "expected a positive integer"),
])
def test_bad_input_is_one_line_exit_2(run_cli, tmp_path, argv, needle):
    code, out, err = run_cli("sweep", "--workload", "resnet50", "--results-dir", tmp_path / "s", *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


def test_a_used_sweep_dir_is_refused_before_any_run(run_cli, tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "old").write_text("x")
    code, _, err = run_cli("sweep", "--workload", "resnet50", "--accelerators", "1", "--results-dir", tmp_path / "s")
    assert code == 2 and "expected a new or empty directory" in err


def test_a_checkpointing_workload_is_not_a_sweep_choice(run_cli, tmp_path):
    for command in (["sweep", "--find-max"], ["sizing", "--accelerators", "8"]):
        code, out, err = run_cli(command[0], "--workload", "llama3-8b", *command[1:])
        assert code == 2 and "invalid choice: 'llama3-8b'" in err and "'resnet50'" in err
        assert len(err.strip().splitlines()) == 1


@pytest.mark.timeout(240)
def test_find_max_probes_stop_once_clear_and_the_confirmation_runs_in_full(run_cli, tiny_data, tmp_path):
    """Four epochs a run, the threshold at 50 %: a probe's AU (~90 % or more) is clearly above it
    after a few epochs, so the probe stops early (sequential test); the confirmation runs all four."""
    out = tmp_path / "sweep"
    argv = [a if a != "train.epochs=2" else "train.epochs=4" for a in tiny_args(tmp_path)]
    code, stdout, err = run_cli("sweep", "--workload", "resnet50", "--find-max", "--max-accelerators", 1,
                                "--data-dir", tiny_data, "--results-dir", out, "--division", "open", *argv)
    assert code == 0, err
    doc = result.load(out)
    assert doc["sequential"] == {"level": 0.95, "min_epochs": 2}
    probe = files.load_json(out / doc["probes"][0]["results_dir"] / "run-1" / "results.json", schema="results")
    assert 2 <= len(probe["epochs"]) < 4 and probe["status"] == "complete"
    for k in range(1, 6):
        run = files.load_json(out / "N1-confirm" / f"run-{k}" / "results.json", schema="results")
        assert len(run["epochs"]) == 4
    assert doc["max_accelerators"]["confirmed"]


def test_find_max_with_a_guess_keeps_a_third_from_either_end():
    """AU falls linearly from 100 at N=0 by 0.2 per accelerator: the threshold 90 is crossed at 50.
    The guess interpolates the AU at the bracket's ends; the answer is the bisection's, in fewer probes."""
    au = {}

    def probe(n, phase):
        au[n] = 100 - 0.2 * n
        return au[n] >= 90

    def guess(good, bad):
        return round(good + (au[good] - 90) / (au[good] - au[bad]) * (bad - good))

    probes, plain = recorder(50)
    assert find_max(plain, 1, 64) == 50
    assert find_max(probe, 1, 64, guess) == 50
    assert len(au) < len(probes)
    seen = []
    assert find_max(lambda n, ph: seen.append(n) or n <= 50, 1, 64, lambda g, b: g + 1) == 50   # a poor guess
    assert len(seen) <= 13


def test_the_bracket_is_the_largest_n_whose_epochs_keep_two_steps(tiny_data):
    """12 files x 20 samples, batch 8: 2 steps an epoch up to N = 15; --full-probes, another
    --start or no --data-dir: no bracket (doubling)."""
    from suite.training.sweep.search import Sweep, SweepOptions

    def sweep(**kw):
        return Sweep(SweepOptions("resnet50", find_max=True, **{"params": TINY, **kw}))
    assert sweep(data_dir=str(tiny_data)).bracket() == 15
    assert sweep(data_dir=str(tiny_data), max_accelerators=9).bracket() == 9
    assert sweep(data_dir=str(tiny_data), params=TINY + ["dataset.num_files_train=6"]).bracket() == 7
    assert sweep(data_dir=str(tiny_data), sequential=False).bracket() is None
    assert sweep(data_dir=str(tiny_data), start=4).bracket() is None
    assert sweep().bracket() is None


def test_a_far_miss_jumps_to_where_the_measured_au_would_meet_the_threshold():
    from suite.training.sweep.search import Sweep, SweepOptions

    s = Sweep(SweepOptions("resnet50", find_max=True))          # resnet50's threshold: 90 %
    s.points = {62: {"storage": {"au_percentage": 78.4}}, 61: {"storage": {"au_percentage": 85.0}},
                60: {"storage": {"au_percentage": None}}}
    assert s.floor(62) == 54                                   # 62 x 78.4 / 90
    assert s.floor(61) is None and s.floor(60) is None and s.floor(5) is None   # a near miss; no AU; no point
