"""`suite submission add`: copy `suite run` results dirs into the benchmark's place in the tree.

Each RESULTS dir goes whole (runs, run_set.json, mlperf_storage_report.json) to
results/<system>/<workload>-<accelerator>/, and the data dir's generation_log.json, with the DLIO
overrides of a data-generation run, to generation_logs/<system>/<workload>-<accelerator>/.
Everything is checked before anything is written.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from suite import files, output
from suite.errors import SuiteError, expected_got
from suite.layouts import manifest
from suite.submission import evidence, place, system as sysdesc
from suite.submission import provenance as ran_code
from suite.submission.layout import Tree, open_tree


def system_hosts(tree: Tree, system: str) -> list[str]:
    path = tree.system_file(system)
    if not path.is_file():
        raise SuiteError(expected_got(path, "file", f"the system description of {system!r} "
                                      f"(suite submission init --system {system})", "none"))
    doc = sysdesc.load(tree, system)
    if tree.layout.v1_system:
        hosts = [h.get("node_name") for h in doc.get("benchmark_hosts", []) if isinstance(h, dict)]
    else:
        hosts = [n for node in (doc.get("Nodes") or {}).values() if isinstance(node, dict)
                 for n in (node.get("hostnames") or [])]
    hosts = [h for h in hosts if isinstance(h, str) and h]
    if not hosts:
        raise SuiteError(expected_got(path, "benchmark_hosts" if tree.layout.v1_system else "Nodes.*.hostnames",
                                      "the host names the runs ran on", "none"))
    return hosts


def _overrides(results: evidence.Results, data_dir: Path) -> list[str]:
    doc = results.runs[0].doc
    return [f"workload={doc.get('dlio_workload') or results.workload + '_' + results.accelerator}",
            "++workload.workflow.generate_data=True", "++workload.workflow.train=False",
            f"++workload.dataset.num_files_train={(doc.get('dataset') or {}).get('num_files_train')}",
            f"++workload.dataset.data_folder={data_dir}"]


def _plan(tree: Tree, system: str, paths: list[Path], hosts: list[str], allow_code: bool = False):
    plans = []
    for path in paths:
        results = evidence.load(path)
        if output.is_inside(path, tree.root) or output.is_inside(tree.root, path):   # it would move under itself
            raise SuiteError(expected_got(path, "RESULTS", f"a results dir outside the tree {tree.root}",
                                          "one inside it" if output.is_inside(path, tree.root) else "one holding it"))
        problems = evidence.refusals(results, tree.ruleset, tree.division, hosts)
        if problems:
            more = f" (+{len(problems) - 1} more: {'; '.join(problems[1:3])})" if len(problems) > 1 else ""
            raise SuiteError(problems[0] + more)
        ran_code.refuse(_code_problems(results), allow_code)
        log_path, _ = evidence.generation_log(results)
        for run in results.runs:
            place.readable(run.results_path)
        plans.append((results, log_path, tree.benchmark_dir(system, results.workload, results.accelerator),
                      tree.generation_dir(system, results.workload, results.accelerator)))
    return plans


def _code_problems(results: evidence.Results) -> list[str]:
    """The runs whose recorded code is not the installed package `package` will ship (suite.submission.provenance)."""
    from suite.harness import provenance

    now = provenance.for_run()["hash"]
    out = []
    for run in results.runs:
        try:
            why = ran_code.problem(run.results_path.parent, now, root=results.path)
        except SuiteError as exc:
            why = str(exc)
        if why:
            out.append(why)
    return out


def add(root: Path, paths: list[Path], system: str, replace: bool, allow_code: bool = False) -> list[str]:
    """The RESULTS dirs into the tree; a run whose recorded code is not the code the tree will ship (or
    that recorded none) refused unless `allow_code` (--allow-code-mismatch)."""
    tree = open_tree(root)
    hosts = system_hosts(tree, system)
    plans = _plan(tree, system, [Path(p) for p in paths], hosts, allow_code)
    targets = [t for _, _, bench, gen in plans for t in (bench, gen)]
    place.refuse_existing(targets, replace)
    for results, _, _, _ in plans:   # refuse links before anything moves
        evidence_files = manifest.listing(results.path)
        if not evidence_files:
            raise SuiteError(expected_got(results.path, "files", "run files", "none"))
    lines = []
    with place.Staging(tree.root) as staging:   # every copy built first; placed together, or none
        for results, log_path, bench, gen in plans:
            bench_tmp, gen_tmp = staging.stage(bench), staging.stage(gen)
            bench_tmp.mkdir()
            n = place.copy_tree(results.path, bench_tmp)
            files.write_atomic(gen_tmp / "generation_log.json", log_path.read_bytes())
            files.write_atomic(gen_tmp / "configs" / "overrides.yaml",
                               yaml.safe_dump(_overrides(results, log_path.parent), sort_keys=False))
            lines.append(f"suite submission add: {results.path} -> {bench} ({len(results.runs)} runs, {n} files); "
                         f"{log_path} -> {gen}")
        moved = staging.commit(place.aside_root(tree.root) if replace else None)
    return lines + [f"  old copy kept at {m}" for m in moved]
