"""suite/kinds/registry.py: a benchmark kind registered from outside the CLI (its own workload file,
its own option) is run, checked and measured through `suite run/check/metrics` unchanged."""

import json

import pytest

from suite.errors import ExitCode, WorkloadError
from suite.kinds import registry
from suite.benchmark import Checked, Kind, Options, Workloads
from suite.storage import workloads

RESULT = "toy-result.json"


def _toy_kind(workload_dir, calls: list) -> Kind:
    def add_run_arguments(p):
        p.add_argument("--toy-knob", type=int, default=None, help="the toy kind's own option")

    def run(args):
        calls.append(("run", args.workload, args.accelerators, args.toy_knob))
        args_dir = workload_dir.parent / "results"
        args_dir.mkdir()
        (args_dir / RESULT).write_text(json.dumps({"knob": args.toy_knob}))
        return 3                                   # a kind's own exit code comes back as it is

    def check(path, args):
        calls.append(("check", str(path), args.format))
        return Checked("toy: 1 finding\n", "verdict: OPEN", ExitCode.FAILED)

    def metrics(path, form):
        calls.append(("metrics", str(path), form))
        print(f"toy knob {json.loads((path / RESULT).read_text())['knob']}")
        return ExitCode.OK

    return Kind(
    name="toy",
    run=run,
    recognises=lambda path: (path / RESULT).is_file(),
    check=check,
    metrics=metrics,
    report_page=lambda path, args: None,
    options=Options(add_run=add_run_arguments, run=("accelerators", "toy_knob")),
    workloads=Workloads(listing=lambda: "Toy: toy-bench", dir=workload_dir))


@pytest.fixture
def toy(tmp_path):
    folder = tmp_path / "workloads"
    folder.mkdir()
    (folder / "toy-bench.yaml").write_text("schema_version: 1\nname: toy-bench\nbenchmark: toy  # a new kind\n")
    calls: list = []
    registry.register(_toy_kind(folder, calls))
    try:
        yield tmp_path, calls
    finally:
        registry.unregister("toy")


def test_run_check_and_metrics_reach_the_kind(toy, run_cli):
    tmp_path, calls = toy
    code, out, err = run_cli("run", "--workload", "toy-bench", "--accelerators", 2, "--toy-knob", 7)
    assert (code, err) == (3, "") and calls == [("run", "toy-bench", 2, 7)]
    result = tmp_path / "results"
    code, out, err = run_cli("check", result, "--format", "json")
    assert (code, out, err) == (1, "toy: 1 finding\n", "") and calls[-1] == ("check", str(result), "json")
    code, out, err = run_cli("check", result, "--output", tmp_path / "check.txt")
    assert code == 1 and out == f"verdict: OPEN; wrote {tmp_path / 'check.txt'}\n"
    assert (tmp_path / "check.txt").read_text() == "toy: 1 finding\n"
    code, out, err = run_cli("metrics", result)
    assert (code, out, err) == (0, "toy knob 7\n", "") and calls[-1] == ("metrics", str(result), "text")
    code, out, _ = run_cli("list")
    assert code == 0 and out.rstrip().endswith("Toy: toy-bench") and "unet3d" in out


def test_an_option_the_kind_does_not_declare_is_refused(toy, run_cli):
    tmp_path, calls = toy
    code, out, err = run_cli("run", "--workload", "toy-bench", "--accelerators", 2, "--runs", 3)
    assert code == 2 and len(err.strip().splitlines()) == 1 and calls == []
    assert "--runs: expected only with a training workload (bert, cosmoflow, dlrm, dlrm-mini, flux, flux-mini, resnet50, " \
           "retinanet, unet3d) or a " \
           "checkpointing workload (llama3-*) or a vector_database workload (vdb-10m, vdb-1m, vdb-mini), got 3 with toy-bench" in err
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--toy-knob", 1,
                             "--results-dir", tmp_path / "r")
    assert code == 2 and "--toy-knob: expected only with --workload toy-bench, got 1 with unet3d" in err
    assert not (tmp_path / "r").exists()


def test_the_kind_comes_from_the_workload_file_not_the_name(toy):
    tmp_path, _ = toy
    assert registry.for_workload("toy-bench").name == "toy"
    assert registry.for_workload("llama3-8b").name == "checkpointing"
    assert registry.for_workload("tpcx-ai").name == "tpcx-ai" and registry.for_workload("bert").name == "training"
    (tmp_path / "workloads" / "llama3-odd.yaml").write_text("schema_version: 1\nname: llama3-odd\nbenchmark: toy\n")
    assert registry.for_workload("llama3-odd").name == "toy"       # a prefix says nothing
    assert "llama3-odd" not in workloads.names("checkpointing") and "tpcx-ai" not in workloads.names("training")


def test_unknown_benchmark_duplicate_name_and_a_second_registration_are_refused(toy):
    tmp_path, _ = toy
    (tmp_path / "workloads" / "odd.yaml").write_text("schema_version: 1\nname: odd\nbenchmark: vector-db\n")
    with pytest.raises(WorkloadError, match=r"odd.yaml: benchmark: expected one of training, .*toy, got 'vector-db'"):
        registry.for_workload("odd")
    (tmp_path / "workloads" / "bert.yaml").write_text("schema_version: 1\nname: bert\nbenchmark: toy\n")
    with pytest.raises(WorkloadError, match="bert.yaml: name: expected a workload name not taken"):
        workloads.paths()
    (tmp_path / "workloads" / "bert.yaml").unlink()
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.get("toy"))


def test_unregistering_takes_its_workloads_away(toy):
    registry.unregister("toy")
    try:
        assert "toy-bench" not in workloads.paths() and "toy" not in [k.name for k in registry.KINDS]
    finally:
        registry.register(_toy_kind(toy[0] / "workloads", toy[1]))


def test_a_workload_file_is_checked_against_its_kinds_schema(toy, run_cli):
    tmp_path, calls = toy
    (tmp_path / "workloads" / "ckpt-odd.yaml").write_text("schema_version: 1\nname: ckpt-odd\nbenchmark: checkpointing\n")
    with pytest.raises(WorkloadError, match="ckpt-odd.yaml: .*model"):
        registry.for_workload("ckpt-odd")
    code, out, err = run_cli("run", "--workload", "ckpt-odd", "--accelerators", 8, "--results-dir", tmp_path / "r")
    assert code == 2 and "ckpt-odd.yaml" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "r").exists()
