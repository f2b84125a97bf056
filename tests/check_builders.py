"""Build small DLIO-style and `suite run`-style result dirs for the checker tests.

Values are computed with suite.training.figures, so a freshly built tree is internally consistent;
tests then break one thing at a time.
"""

import json
import math
import shutil
from pathlib import Path

import yaml

from suite.training import workloads

from suite.training import figures as metrics

RECORD = {"unet3d": 146600628, "resnet50": 114660.07, "cosmoflow": 2828486}


def write_json(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=4))
    return path


def write_yaml(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def dlio_run(d: Path, workload="unet3d", accel="h100", accelerators=1, hosts=1, files=3500,
             au=(95.0, 95.5, 96.0), tp=(3.0, 3.1, 3.2), host_memory_gb=1.0, overrides_extra=(),
             workload_name=None, v05=False, start="2024-08-07T14:23:23.782006"):
    """A DLIO v1.0 (or v0.5) run directory: summary.json, per_epoch_stats.json, configs/."""
    w = workloads.resolve(workload, accel)
    rec = w.record_length_bytes
    metric = metrics.run_metric(list(au), list(tp), rec, w.au_threshold)
    summary = {"start": start, "num_accelerators": accelerators, "hostname": "host1", "metric": metric,
               "num_files_train": files, "num_files_eval": 0, "num_samples_per_file": w.num_samples_per_file,
               "epochs": len(au), "end": "2024-08-07T14:38:31.093688"}
    if v05:
        summary["model"] = workload
    else:
        summary.update({"num_hosts": hosts, "host_memory_GB": [host_memory_gb] * hosts,
                        "host_cpu_count": [8] * hosts})
    write_json(d / "summary.json", summary)
    write_json(d / "per_epoch_stats.json", {str(e + 1): {"start": start, "end": start, "duration": "1.00"}
                                            for e in range(len(au))})
    name = workload_name or (workload if v05 else f"{workload}_{accel}")
    ov = [f"workload={name}", "++workload.workflow.generate_data=False", "++workload.workflow.train=True",
          f"++workload.dataset.num_files_train={files}", "++workload.dataset.data_folder=/data/x",
          "++workload.reader.read_threads=4", *overrides_extra]
    write_yaml(d / "configs" / "overrides.yaml", ov)
    config = {"workload": {"model": workload, **{k: v for k, v in w.config.items()}}}
    config["workload"]["dataset"] = {**config["workload"]["dataset"], "num_files_train": files}
    write_yaml(d / "configs" / "config.yaml", config)
    return d


def run_start(k: int) -> str:
    """Run k's start time: runs are distinct measurements, each after the one before."""
    return f"2024-08-07T{10 + k:02d}:23:23.782006"


def dlio_benchmark(d: Path, runs=5, run_name="run{k}", **kw) -> Path:
    for k in range(1, runs + 1):
        dlio_run(d / run_name.format(k=k), **({"start": run_start(k)} | kw))
    return d


def ours_run(d: Path, ranks=2, epochs=3, steps=6, compute_s=None, wait_s=0.0002, files=7000,
             workload="unet3d", accel="h100", miniature=False, complete=True, memory=True, start=None):
    """A `suite run` run dir: DLIO files + steps/rank-<r>.json + results.json, consistent."""
    w = workloads.resolve(workload, accel)
    compute_s = w.computation_time_s if compute_s is None else compute_s   # the workload's, as a run records it
    aus, tps, rank_docs = [], [], {r: {"schema_version": 1, "rank": r, "hostname": "host1", "epochs": []}
                                   for r in range(ranks)}
    for e in range(epochs):
        per_rank, rank_tps = [], []
        for r in range(ranks):
            t = 100.0 * e
            starts, ends, comp = [], [], []
            for s in range(steps):
                wait = wait_s * (1 + r + s % 3)
                starts.append(t)
                t += wait + compute_s
                ends.append(t)
                comp.append(compute_s)
            rank_docs[r]["epochs"].append({"epoch": e + 1, "step_start_s": starts, "step_end_s": ends,
                                           "step_compute_s": comp, "samples": steps * w.batch_size,
                                           "bytes_read": int(steps * w.batch_size * w.record_length_bytes)})
            per_rank.append(metrics.epoch_au_from_steps(starts, ends, comp))
            rank_tps.append(steps * w.batch_size / (ends[-1] - starts[0]))   # DLIO: every sample / epoch wall
        aus.append(metrics.mean_pstdev(per_rank)[0])                          # ranks' AU averaged
        tps.append(math.fsum(rank_tps))                                       # ranks' samples/s summed
    dlio_run(d, workload=workload, accel=accel, accelerators=ranks, files=files, au=aus, tp=tps,
             **({"start": start} if start else {}))
    for r, doc in rank_docs.items():
        write_json(d / "steps" / f"rank-{r}.json", doc)
    results = {
        "schema_version": 1, "workload": workload, "dlio_workload": w.dlio_name, "accelerator": accel,
        "num_accelerators": ranks, "ruleset": "v1.0",
        "division": "closed", "complete": complete, "status": "complete" if complete else "interrupted",
        "miniature": miniature,
        "enforcement": {
            "cache_drop": {"attempted": True, "succeeded": True, "duration_s": 0.2, "error": None},
            "memory_limit": ({"requested_bytes": 1 << 30, "applied_bytes": 1 << 30, "peak_bytes": 900 << 20,
                              "version": "v1", "removed": True} if memory else None),
        },
        "compliance": {"compliant": True, "reasons": []},
    }
    write_json(d / "results.json", results)
    return d


def ours_results(d: Path, runs=5, **kw) -> Path:
    for k in range(1, runs + 1):
        ours_run(d / f"run-{k}", **({"start": run_start(k)} | kw))
    return d


def edit_json(path: Path, fn) -> None:
    """Apply `fn` to the parsed document in place and write it back."""
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc, indent=4))


def edit_overrides(path: Path, fn) -> None:
    items = yaml.safe_load(path.read_text())
    write_yaml(path, fn(items))


SYSTEM_V1 = {
    "networks": [{"network_name": "net", "network_type": "Ethernet", "bitrate": 100, "protocols": ["NFS"]}],
    "nodes": [{"node_type_name": "client", "config_options": [], "CPU": {"vendor_and_model_name": "x"},
               "DRAM": {"capacity_MiB": 1024}, "accelerators": [], "nic_ports": [], "drives": []}],
    "benchmark_hosts": [{"node_name": "c1", "node_type_name": "client", "benchmark_instances": [{}]}],
    "storage_system": {"vendor_name": "V", "solution_name": "S", "model_name": "M", "version": "1",
                       "software_defined": "yes", "hyperconverged": "no", "solution_type": "NAS",
                       "client_mount_options": [], "usable_capacity_GiB": 100, "raw_capacity_GiB": 120,
                       "software_components": []},
}


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def submission(root: Path, org="Org", system="sys1", bench="unet3d-h100", runs=5, **kw) -> Path:
    """closed/<org>/{results/<system>/<bench>/run1..5, systems/<system>.json, generation_logs/...}."""
    base = root / "closed" / org
    dlio_benchmark(base / "results" / system / bench, runs=runs, **kw)
    storage_report(base / "results" / system / bench)
    write_json(base / "systems" / f"{system}.json", SYSTEM_V1)
    (base / "systems" / f"{system}.pdf").write_bytes(PDF)
    model, accel = bench.split("-")
    write_yaml(base / "generation_logs" / system / bench / "datagen" / "configs" / "overrides.yaml",
               [f"workload={model}_{accel}", "++workload.workflow.generate_data=True",
                "++workload.workflow.train=False"])
    return root


def rank_outputs(run_dir: Path, ranks=None) -> Path:
    """DLIO <rank>_output.json files agreeing with the run's summary (AU mean, throughput sum)."""
    s = json.loads((run_dir / "summary.json").read_text())
    n = ranks or s["num_accelerators"]
    m = s["metric"]
    for r in range(n):
        doc = {"host_memory_GB": 1.0, "hostname": "host1"}
        for e, (au, tp) in enumerate(zip(m["train_au_percentage"], m["train_throughput_samples_per_second"])):
            # spread the AU around the mean so the mean over ranks is exact-ish, throughput split evenly
            delta = (r - (n - 1) / 2) * 0.5
            doc[str(e + 1)] = {"au": {"block1": au + delta}, "throughput": {"block1": tp / n},
                               "load": {"block1": [0.01]}, "proc": {"block1": [0.1]}, "compute": {"block1": [0.1]}}
        write_json(run_dir / f"{r}_output.json", doc)
    return run_dir


def storage_report(bench: Path, runs_dir: Path | None = None, model="unet3d") -> Path:
    """mlperf_storage_report.json computed (as report.py does) from the runs' summaries."""
    runs, info = {}, {}
    for d in sorted((runs_dir or bench).iterdir()):
        if (d / "summary.json").is_file():
            s = json.loads((d / "summary.json").read_text())
            runs[d.name] = (s["metric"][metrics.SAMPLES_MEAN], s["metric"][metrics.IO_MEAN])
            info = {"model": model, metrics.NUM_ACCELERATORS: str(s["num_accelerators"]),
                    "num_files_train": s["num_files_train"], "num_samples_per_file": s["num_samples_per_file"]}
    return write_json(bench / "mlperf_storage_report.json", metrics.storage_report(info, runs))


def make_committed_dirs(data: Path) -> None:
    """(Re)build tests/data/check/{valid,broken}: `python -c "import check_builders as b, pathlib;
    b.make_committed_dirs(pathlib.Path('data/check'))"` from tests/."""
    import shutil
    for sub in ("valid", "broken"):
        if (data / sub).exists():
            shutil.rmtree(data / sub)
    ours_results(data / "valid" / "suite-run-5x2ranks")
    dlio_benchmark(data / "valid" / "dlio-unet3d-h100")
    cases = {}
    br = data / "broken"
    b = dlio_benchmark(br / "au-below-threshold", au=(85.0, 86.0, 88.0))
    cases[b.name] = (1, ["au-threshold"])
    b = dlio_benchmark(br / "truncated-summary")
    (b / "run2" / "summary.json").write_text('{"metric": {"train_au')
    cases[b.name] = (1, ["input-readable"])
    b = dlio_benchmark(br / "four-runs", runs=4)
    cases[b.name] = (1, ["structure-run-count"])
    b = dlio_benchmark(br / "dataset-too-small", files=1000)
    cases[b.name] = (1, ["dataset-size"])
    b = dlio_benchmark(br / "edited-au-mean")
    edit_json(b / "run4" / "summary.json", lambda d: d["metric"].update(train_au_mean_percentage=97.0))
    cases[b.name] = (1, ["integrity-au-mean"])
    b = dlio_benchmark(br / "open-param", overrides_extra=("++workload.dataset.format=npy",))
    cases[b.name] = (1, ["closed-params"])
    b = dlio_benchmark(br / "unknown-param", overrides_extra=("++workload.reader.batch_size=2",))
    cases[b.name] = (1, ["closed-params", "open-params"])
    b = ours_results(br / "suite-run-no-cache-drop")
    edit_json(b / "run-2" / "results.json",
              lambda d: d["enforcement"]["cache_drop"].update(succeeded=False, error="Permission denied"))
    cases[b.name] = (1, ["ours-cache-drop-succeeded"])
    b = ours_results(br / "suite-run-edited-epoch-au")
    edit_json(b / "run-3" / "summary.json", lambda d: d["metric"]["train_au_percentage"].__setitem__(0, 99.0))
    cases[b.name] = (1, ["integrity-steps-au", "integrity-au-mean"])
    b = ours_results(br / "suite-run-interrupted", complete=False)
    cases[b.name] = (1, ["ours-complete", "ours-status"])
    (br / "expected.json").write_text(json.dumps({k: {"exit": v[0], "rules": v[1]} for k, v in sorted(cases.items())},
                                                 indent=2) + "\n")


def whole_tree(root: Path) -> dict:
    """A synthetic multi-organisation v1.0 results repository mixing the published layout variants;
    returns {benchmark path suffix: expected verdict label} (tests/check/test_trees.py)."""
    closed = root / "Closed"
    expect = {}
    # A: DDN style, two systems, logs at the org level by workload, code/ with a deep artefact, an aborted run
    for system, bench in (("a-18clients", "unet3d-h100"), ("a-32clients", "resnet50-h100")):
        model, accel = bench.split("-")
        extra = {"au": (95.0, 95.5), "tp": (100.0, 101.0), "files": 20000} if model == "resnet50" else {}
        b = dlio_benchmark(closed / "A" / "results" / system / bench / "runs", workload=model, accel=accel, **extra)
        storage_report(b.parent, b, model=model)
        write_json(closed / "A" / "systems" / f"{system}.json", SYSTEM_V1)
        (closed / "A" / "systems" / f"{system}.pdf").write_bytes(PDF)
        write_yaml(closed / "A" / "generation_logs" / bench / "c1" / "configs" / "overrides.yaml",
                   [f"workload={model}_{accel}", "++workload.workflow.generate_data=True",
                    "++workload.workflow.train=False"])
        expect[f"A/results/{system}/{bench}"] = "CLOSED"
    d = closed / "A" / "code" / "build"
    for i in range(40):
        d = d / f"d{i}"
    d.mkdir(parents=True)
    write_yaml(closed / "A" / "results" / "a-18clients" / "cosmoflow-h100" / "run1" / "configs" / "overrides.yaml",
               ["workload=cosmoflow_h100"])
    # B: simplyblock style (benchmark directly under results/, its own .JSON description), a plain .log
    b = dlio_benchmark(closed / "B" / "results" / "unet3d-h100")
    storage_report(b)
    write_json(closed / "B" / "systems" / "unet3d-h100.JSON", SYSTEM_V1)
    (closed / "B" / "systems" / "unet3d-h100.pdf").write_bytes(PDF)
    (closed / "B" / "unet3d-gen").mkdir(parents=True)
    (closed / "B" / "unet3d-gen" / "datagen.log").write_text(
        "[INFO] 2024-08-07T08:00:00 workload=unet3d_h100 ++workload.dataset.num_files_train=3500\n")
    expect["B/results/unet3d-h100"] = "CLOSED"
    # C: near-match description name inside results/<system>/systems/, rank-0-only 4-host runs
    for k in range(1, 6):
        run = closed / "C" / "results" / "c-Nclients4" / "unet3d-h100" / f"run{k}"
        dlio_run(run / "host1", accelerators=4, hosts=4, files=14000, start=run_start(k))
        for h in range(2, 5):
            write_yaml(run / f"host{h}" / "configs" / "overrides.yaml", ["workload=unet3d_h100"])
    runs = {}      # the report from the rank-0 summaries (run<k>/host1/summary.json)
    for k in range(1, 6):
        s = json.loads((closed / "C" / "results" / "c-Nclients4" / "unet3d-h100" / f"run{k}" / "host1" /
                        "summary.json").read_text())
        runs[f"run{k}"] = (s["metric"][metrics.SAMPLES_MEAN], s["metric"][metrics.IO_MEAN])
    write_json(closed / "C" / "results" / "c-Nclients4" / "unet3d-h100" / "mlperf_storage_report.json",
               metrics.storage_report({"model": "unet3d", metrics.NUM_ACCELERATORS: "4", "num_files_train": 14000,
                                       "num_samples_per_file": 1}, runs))
    write_json(closed / "C" / "results" / "c-Nclients4" / "systems" / "c-Nclient4.json", SYSTEM_V1)
    (closed / "C" / "results" / "c-Nclients4" / "systems" / "c-Nclient4.pdf").write_bytes(PDF)
    write_json(closed / "C" / "systems" / "c-other.json", SYSTEM_V1)
    (closed / "C" / "systems" / "c-other.pdf").write_bytes(PDF)
    write_yaml(closed / "C" / "datagen" / "configs" / "overrides.yaml",
               ["workload=unet3d_h100", "++workload.workflow.generate_data=True", "++workload.workflow.train=False"])
    expect["C/results/c-Nclients4/unet3d-h100"] = "CLOSED"
    # D: a system description with a trailing comma: CLOSED, fix required
    submission(root, org="D", system="d1")
    (root / "closed" / "D").rename(closed / "D")
    p = closed / "D" / "systems" / "d1.json"
    p.write_text(p.read_text().replace("\n}", ",\n}", 1))
    expect["D/results/d1/unet3d-h100"] = "CLOSED, fix required"
    # E: no generation logs at all (another organisation's logs do not count): INVALID
    submission(root, org="E", system="e1")
    (root / "closed" / "E").rename(closed / "E")
    shutil.rmtree(closed / "E" / "generation_logs")
    expect["E/results/e1/unet3d-h100"] = "INVALID"
    # F: a workload the rules do not know
    b = dlio_benchmark(closed / "F" / "results" / "f1" / "bench", workload_name="gpt9_z900")
    for k in range(1, 6):
        conf = b / f"run{k}" / "configs" / "config.yaml"
        doc = yaml.safe_load(conf.read_text())
        doc["workload"].pop("model")
        conf.write_text(yaml.safe_dump(doc))
    write_json(closed / "F" / "systems" / "f1.json", SYSTEM_V1)
    (closed / "F" / "systems" / "f1.pdf").write_bytes(PDF)
    expect["F/results/f1/bench"] = "INVALID, fix required"      # no report either
    (root / "closed").rmdir()
    return expect


def whole_check(path: Path, ruleset: str = "auto"):
    """`suite check PATH` as the command runs it (the one partitioner, suite.kinds.tree: a benchmark-dir
    tree's layout, its own findings beside its nodes' kind's results): its CheckResult. The kind's own
    judgement of the nodes alone is suite.training.check.checker.check."""
    import argparse

    from suite.kinds import tree
    from suite.report.findings import RESULT

    return tree.check(Path(path), argparse.Namespace(format=RESULT, ruleset=ruleset)).result
