"""Published MLPerf Storage v3.0 trees (mlcommons/storage_results_v3.0's layout: `closed|open/<Org>/
results/<system>/<benchmark>/...`, `<Org>/systems/`, the code pool `<Org>/code-<hash8>/`): checked by
suite.published.check (rules/<round>/<tree_rules>/), figures by suite.published.figures, shown by
suite.published.page. A results kind: it runs nothing. PATH may be the tree, an organisation, a
system, a benchmark or one leaf; kv_cache and vector_database folders go to the kinds that recognise
them (`whole_tree`: suite.kinds.tree hands their check over).
"""

from __future__ import annotations

from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.benchmark import Checked, Kind

NAME = "mlperf-v3-tree"


def run(args) -> int:
    raise SuiteError(f"benchmark: {NAME} checks published trees; it runs nothing")


def recognises(path: Path) -> bool:
    from suite.published import tree as v3tree

    p = Path(path)
    if p.is_dir() and ((p / "results.json").is_file() or (p / "run_set.json").is_file()):
        return False                          # our own run's results: its kind's
    return v3tree.looks_v3(p)


def _result(path: Path, args=None):
    from suite.published import check as v3check

    return v3check.check(Path(path), delegate=getattr(args, "for_result", None),
                         ruleset_name=getattr(args, "ruleset", None))


def check(path: Path, args) -> Checked:
    from suite.published import check as v3check
    from suite.published import page as v3tree_text

    if getattr(args, "ruleset", None) not in (None, "auto", *v3check.tree_rounds()):
        from suite.training import kind as training       # another round asked for: the storage checker holds it to that

        return training.check_storage(path, args)
    res = _result(path, args)
    out = v3tree_text.check_json(res) if getattr(args, "format", "text") == "json" else v3tree_text.check_text(res)
    return Checked(out, v3tree_text.summary_line(res), ExitCode.OK if res.compliant else ExitCode.FAILED, res.verdict)


def metrics(path: Path, form: str) -> int:
    from suite.published import page as v3tree_text

    res = _result(path)
    print(v3tree_text.metrics_json(res) if form == "json" else v3tree_text.metrics_text(res), end="")
    return ExitCode.OK


def report_page(path: Path, args):
    from suite.published import page as v3tree_text

    return v3tree_text.page(_result(path, args))


KIND = Kind(name=NAME, run=run, recognises=recognises, check=check, metrics=metrics, report_page=report_page,
            whole_tree=True)
