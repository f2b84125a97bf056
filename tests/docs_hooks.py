"""What a reader of a docs example does between its lines, for tests/test_docs_examples.py's `run`
blocks tagged `hook=NAME`: `before(k, argv, cwd)` may change line k's argv (a data dir the test
already holds), `after(k, argv, cwd, said)` acts as the docs tell the reader to (fill in a TODO
field), `finish(cwd)` checks what the block leaves behind as the page describes it."""

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUBMISSION_PAGE = REPO / "docs" / "submission.md"
V3_TREE = REPO / "tests" / "data" / "v3" / "tree" / "closed" / "Alluxio" / "results"
V3_LEAVES = [V3_TREE / "aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d",       # published leaves
             V3_TREE / "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"]  # stand in for ours


@dataclass
class Ran:
    """A line already run, by a fixture that runs exactly that line (its exit code and output)."""
    code: int
    said: str = ""


class Hook:
    def __init__(self, request):
        self.request = request

    def before(self, k: int, argv: list[str], cwd: Path) -> list[str] | Ran:
        return argv

    def after(self, k: int, argv: list[str], cwd: Path, said: str) -> None:
        pass

    def finish(self, cwd: Path) -> None:
        pass


class CheckpointWithoutResultsDir(Hook):
    """docs/object-storage.md: the v3.0 checkpoint without --results-dir goes to a fresh claimed dir."""

    def finish(self, cwd: Path) -> None:
        leaves = sorted(cwd.glob("results/llama3-8b-8p-*/checkpointing/llama3-8b/*"))
        assert len(leaves) == 2 and not (cwd / "results" / "checkpointing").exists(), leaves
        assert not list(cwd.glob("results/*/.suite-claim"))


def closed_flow(data: Path, results: Path, accelerator: str) -> list[list[str]]:
    """docs/submission.md's first example, its `suite datagen` and `suite run` lines as the page has them,
    /data/cf -> data, R -> results, and --accelerator-type (the tests' closed runs are on a100: see
    tests/conftest.closed_results). The page's lines are the one source: change them and this follows."""
    lines = [line.split(" #", 1)[0] for line in SUBMISSION_PAGE.read_text().splitlines()
             if re.match(r"suite (datagen|run) --workload cosmoflow ", line)][:2]
    assert len(lines) == 2, f"{SUBMISSION_PAGE}: expected its datagen and run lines"
    out = []
    for line in lines:
        argv = [str(data) if a == "/data/cf" else str(results) if a == "R" else a for a in shlex.split(line)[1:]]
        out.append([*argv, "--accelerator-type", accelerator])
    return out


def needs_a_browser() -> None:
    """`describe` makes the PDF with chromium (tools/install-debian-packages.sh installs it)."""
    import pytest

    from suite.submission import document

    if document.browser() is None:
        pytest.skip("chromium not installed: `describe` cannot make the PDF the page says it makes")


class ClosedSubmission(Hook):
    """docs/submission.md's closed v1.0/v2.0 flow. Its datagen and run lines are tests/conftest's
    closed_results, which runs exactly them (`closed_flow`) once for the whole session: the five
    closed runs (a minute or two) serve this example, the end-to-end test and tests/submission alike."""

    def __init__(self, request):
        super().__init__(request)
        needs_a_browser()
        self.results = request.getfixturevalue("closed_results")

    def before(self, k, argv, cwd):
        if argv[0] in ("datagen", "run"):
            return Ran(0)          # closed_results asserted exit 0 of this very line
        return [str(self.results.parent / "data") if a.endswith("/data/cf") else str(self.results) if a == "R" else a
                for a in argv]

    def after(self, k, argv, cwd, said):
        if argv[:2] == ["submission", "init"]:
            from tests.submission.submission_helpers import fill_todos      # what the page tells the reader to do

            fill_todos(cwd / "sub/Closed/ACME/systems/box1.json")

    def finish(self, cwd):
        assert (cwd / "sub.tar.gz").is_file() and (cwd / "sub/SHA256SUMS").is_file()
        runs = {p.name for p in (cwd / "sub/Closed/ACME/results/box1/cosmoflow-a100").iterdir()}
        assert {f"run-{k}" for k in range(1, 6)} | {"run_set.json"} <= runs, runs
        assert (cwd / "sub/Closed/ACME/systems/box1.pdf").read_bytes()[:5] == b"%PDF-"


class V3Submission(Hook):
    """docs/submission.md's v3.0 flow: RESULTS... are two published v3.0 leaves (a training and a
    checkpointing benchmark, tests/data/v3/tree) standing in for the reader's; the description filled
    in as tests/submission/test_submission_v3.py's submitter does."""

    def __init__(self, request):
        super().__init__(request)
        needs_a_browser()

    def before(self, k, argv, cwd):
        argv = [str(cwd) if a == "/data" else a for a in argv]
        return [w for a in argv for w in ([str(p) for p in V3_LEAVES] if a == "RESULTS..." else [a])]

    def after(self, k, argv, cwd, said):
        if argv[:2] == ["submission", "init"]:
            from tests.submission.submission_helpers import fill_v3

            fill_v3(cwd / "sub")

    def finish(self, cwd):
        from suite.published import check as v3check

        assert (cwd / "sub.tar.gz").is_file()
        res = v3check.check(cwd / "sub")
        assert res.compliant, [f.message for f in res.findings if f.severity == "error"]


CHECKPOINT_PAGE = REPO / "docs" / "checkpointing.md"
V2_PAIR = re.compile(r"suite run --workload llama3-8b .*--ruleset v2\.0 ")


PAIR_MEMORY_LIMIT = ["--memory-limit", "1GiB"]


def v2_checkpoint_pair(base: Path) -> list[tuple[int, str]]:
    """docs/checkpointing.md's v2.0 write and read lines as the docs test runs them (small: the miniature;
    /mnt under `base`), in a 1 GiB memory cgroup (PAIR_MEMORY_LIMIT: what tests/checkpointing/test_run.py
    asserts of the pair's enforcement), run in `base` (their ck/W and ck/R land there): [(exit code, what
    each said)]. The page's lines are the one source; tests/conftest.py's `v2_checkpoint_pair` runs them
    once a session for this example, tests/checkpointing/test_run.py and tests/test_reference_tool.py's
    reportgen alike."""
    import contextlib
    import io
    import os

    from suite import cli
    from tests.test_docs_examples import given_or, small

    lines = [line.split(" #", 1)[0] for line in CHECKPOINT_PAGE.read_text().splitlines() if V2_PAIR.match(line)][:2]
    assert len(lines) == 2, f"{CHECKPOINT_PAGE}: expected its v2.0 write and read lines"
    here, out = os.getcwd(), []
    os.chdir(base)
    try:
        for line in lines:
            said_out, said_err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(said_out), contextlib.redirect_stderr(said_err):
                argv = small(shlex.split(line)[1:], base)
                code = cli.main([*argv, *given_or(PAIR_MEMORY_LIMIT, argv)])
            out.append((code, said_out.getvalue() + said_err.getvalue()))
    finally:
        os.chdir(here)
    return out


class V2CheckpointPair(Hook):
    """docs/checkpointing.md's v2.0 two-phase example: its write and read lines are tests/conftest's
    `v2_checkpoint_pair`, which runs exactly them once a session (80 rank processes: the reference-tool
    test and tests/checkpointing/test_run.py read the same pair); their ck/ is copied here for the check,
    metrics and report lines."""

    def __init__(self, request):
        super().__init__(request)
        self.base, self.ran = request.getfixturevalue("v2_checkpoint_pair")

    def before(self, k, argv, cwd):
        if k >= len(self.ran):
            return argv
        if k == 0:
            import shutil

            shutil.copytree(self.base / "ck", cwd / "ck", symlinks=True)
        code, said = self.ran[k]
        return Ran(code, said.replace(str(self.base), str(cwd)))


# A page's first `suite run` line that another test's session run is too: run once a session, here
# and for tests/test_one_voice.py's run of that kind (the same command, the same size): name -> (page,
# the line's start, its results dir)
SHARED_LINES = {"docs-tpcx-ai": (REPO / "docs" / "tpcx-ai.md", "suite run --workload tpcx-ai ", "T"),
                "docs-v3-miniature": (CHECKPOINT_PAGE, "suite run --workload llama3-8b --accelerators 8 --ruleset v3.0 "
                                      "--results-dir R ", "R")}


def docs_line_run(base: Path, name: str) -> tuple[list[str], int, str, str]:
    """SHARED_LINES[name]'s line as the docs test runs it (`small`: TPCx-AI use case 1 on 1 process, a
    checkpointing run the miniature; its results dir under `base`), run in `base` as a reader would,
    recorded in the history: (argv, exit code, stdout, stderr). The page's line is the one source."""
    import contextlib
    import io
    import os

    from suite import cli
    from tests.test_docs_examples import small

    page, start, _ = SHARED_LINES[name]
    lines = [line.split(" #", 1)[0] for line in page.read_text().splitlines() if line.startswith(start)]
    assert len(lines) == 1, f"{page}: expected one line starting {start!r}, found {len(lines)}"
    argv = small(shlex.split(lines[0])[1:], base)
    here, said_out, said_err = os.getcwd(), io.StringIO(), io.StringIO()
    os.chdir(base)
    try:
        with contextlib.redirect_stdout(said_out), contextlib.redirect_stderr(said_err):
            code = cli.main(argv)
    finally:
        os.chdir(here)
    return argv, code, said_out.getvalue(), said_err.getvalue()


def shared_docs_line(tmp_path_factory, name: str) -> tuple[Path, list[str], int, str, str]:
    """(base, argv, exit code, stdout, stderr) of `docs_line_run(base, name)`, made once a session
    (across xdist's workers: tests/conftest.py `once`): the docs example and tests/test_one_voice.py's
    run of that kind are this one run (the same command: TPCx-AI's ~17 CPU s, the v3.0 miniature's ~4,
    each made twice before). Its results dir is base/SHARED_LINES[name][2]: copy before changing it."""
    from tests.conftest import once

    def make(factory):
        base = factory.mktemp(name)
        return (base, *docs_line_run(base, name))

    return once(tmp_path_factory, name, make)


def linked_copy(src: Path, dst: Path) -> None:
    """src's tree at dst, its files hard links where the file system allows (what only reads them, as
    `suite check` and `suite report` do, needs no copy of a 70 MB TPCx-AI results dir)."""
    import os
    import shutil

    def link(a, b):
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dst, symlinks=True, copy_function=link)


class SharedFirstLine(Hook):
    """A block whose first line is SHARED_LINES[name]'s: `shared_docs_line` runs exactly that line once
    a session (tests/test_one_voice.py's run of that kind reads the same); its exit code and output are
    checked here as any line's, its results dir linked here for the block's other lines, which run here
    as the page has them."""

    name = ""

    def __init__(self, request):
        super().__init__(request)
        self.base, self.argv, self.code, out, err = shared_docs_line(request.getfixturevalue("tmp_path_factory"),
                                                                     self.name)
        self.said = out + err

    def before(self, k, argv, cwd):
        if k != 0:
            return argv
        here = [a.replace(str(self.base), str(cwd)) for a in self.argv]
        assert here == argv, f"the shared run ran {self.argv}, the page's line is {argv}"
        results = SHARED_LINES[self.name][2]
        linked_copy(self.base / results, cwd / results)
        return Ran(self.code, self.said.replace(str(self.base), str(cwd)))


class TpcxAiRun(SharedFirstLine):
    """docs/tpcx-ai.md's example: its run is the session's TPCx-AI run."""

    name = "docs-tpcx-ai"


class V3MiniatureRun(SharedFirstLine):
    """docs/checkpointing.md's v3.0 example: its run is the session's llama3-8b v3.0 miniature."""

    name = "docs-v3-miniature"


HOOKS = {"ckpt-claims-a-dir": CheckpointWithoutResultsDir, "closed-submission": ClosedSubmission,
         "v3-submission": V3Submission, "v2-checkpoint-pair": V2CheckpointPair, "tpcx-ai-run": TpcxAiRun,
         "v3-miniature-run": V3MiniatureRun}
