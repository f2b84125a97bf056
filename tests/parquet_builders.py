"""Real Parquet series (flux-mini, dlrm-mini on b200, one accelerator): `suite datagen`, then a real
`suite run --ruleset v3.0` (cli.main in this process; a warm-up and RUNS measured runs, cache drops,
mpiexec), made once per session and workload (across pytest-xdist's workers too: tests/conftest.py
`once`) and copied for each test.
flux-mini runs with a storage of a known service time (--debug-read-delay, 0.1 s a file) so that
reading, not decoding, is most of its readers' time here; `slow` plants a slow decode on top
(--debug-decode-delay). Never compliant (debug knobs, a small dataset)."""

import shutil
from pathlib import Path

from suite.training.data import datagen
from suite.training import workloads

_MADE: dict[tuple, Path] = {}
FILES = {"flux-mini": 16, "dlrm-mini": 4}
EXTRA = {"flux-mini": ("--debug-read-delay", "0.1"), "dlrm-mini": ()}
# a warm-up and two measured runs: what the tests read is per run (reads, decode share, the ceiling each
# carries), run after run; v3.0's default five add only CPU (issue 47: the suite on a busy machine)
RUNS = 2


def _made(key: tuple, factory, make) -> Path:
    """make(factory) once a session: in this process (`_MADE`) and across the workers (`once`)."""
    from tests.conftest import once

    if key not in _MADE:
        _MADE[key] = once(factory, "parquet-" + "-".join(map(str, key)), make)
    return _MADE[key]


def data(name: str, factory) -> Path:
    """The workload's miniature dataset, written once per session (`factory`: the tmp_path_factory)."""
    def make(f) -> Path:
        tmp = f.mktemp(f"parquet-{name}-")
        datagen.generate(workloads.resolve(name, "b200"), tmp / "data", FILES[name], processes=2)
        return tmp / "data"
    return _made(("data", name), factory, make)


def run(name: str, results: Path, factory, *extra: str) -> tuple[int, str]:
    """`suite run` of `name` (cli.main in this process, in results.parent): (exit code, what it said). The
    ranks, cache drops and mpiexec are as real either way; a child `python -m suite` only added its start-up."""
    import contextlib
    import io
    import os

    from suite import cli

    argv = ["run", "--workload", name, "--accelerator-type", "b200", "--accelerators", "1", "--ruleset", "v3.0",
            "--data-dir", str(data(name, factory)), "--results-dir", str(results), "--division", "open",
            *EXTRA[name], "--runs", str(RUNS), *extra]
    said, here = io.StringIO(), os.getcwd()
    os.chdir(results.parent)
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            try:
                code = cli.main(argv)
            except SystemExit as exc:       # argparse usage errors
                code = exc.code
    finally:
        os.chdir(here)
    return code, said.getvalue()


def series(dst: Path, name: str, factory, slow: bool = False) -> Path:
    """A copy of the session's series of `name` at `dst` (R: run_set.json, training/<name>/run/<ts>/ x 6)."""
    def make(f) -> Path:
        tmp = f.mktemp(f"parquet-{name}-res-")
        extra = ("--debug-decode-delay", "0.2", "--runs", "1") if slow else ()
        _code, said = run(name, tmp / "res", f, *extra)
        assert (tmp / "res" / "run_set.json").is_file(), said[-4000:]
        return tmp / "res"
    shutil.copytree(_made((name, "slow" if slow else "series"), factory, make), dst)
    return dst


def leaves(root: Path, name: str) -> list[Path]:
    return sorted((root / "training" / name / "run").iterdir())
