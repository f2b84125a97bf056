"""Every `suite ...` example in README.md and docs/*.md code blocks either runs here at a small size
and ends as the docs say, or parses with the real `suite` parser (docs/architecture.md, "Examples in
the docs", is the convention):

- `<!-- example: run -->` (or `run s3`) before a fenced block: its `suite` lines run in order in a
  fresh working directory (`s3`: against the real local S3 server, `s3://bench/` a fresh bucket on it,
  the block's tools/s3-server.sh lines being the fixture's); a training workload's datagen and run at a
  small size (SMALL, RUN_SMALL below: what the embedded miniature does, smaller records and steps);
  `results/<the results dir>` is the newest results dir. Each line ends as its
  `# ends: exit N, "text", ...` comment says (exit code, quoted text in the output), else exit 0.
- `<!-- example: parse -->`: each `suite` line parses with `suite.cli`'s parser (every flag exists,
  every value is allowed) and `suite run`'s per-kind option check accepts it.
- `<!-- example: usage -->`: a synopsis: `[...]` taken as given, `a|b` as its first choice, then parsed.
A fenced block with a `suite` command and no marker fails, and so does an indented one.
"""

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.storage.s3.conftest import bucket, s3_server  # noqa: F401  (the real S3 server, for `run s3`)

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<before>.*?)^```[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!-- example: (run|parse|usage)( s3)?\b[^>]*-->\s*$")
COMMAND = re.compile(r"(?:^|&&\s*)(suite [a-z][\w-]*(?:\s[^&;]*)?)$")   # not `suite check: error: ...` (output)
SMALL = ["--param", "dataset.record_length=200000", "--param", "dataset.record_length_stdev=50000"]
RUN_SMALL = [*SMALL, "--param", "train.epochs=2", "--param", "train.computation_time=0.005",
             "--param", "checkpoint.model_size=1000000", "--runs", "1", "--memory-limit", "256MiB"]


@dataclass
class Example:
    where: str            # page:line
    block: str            # page:line of its block
    mode: str             # run, parse, usage
    s3: bool
    line: str             # the command as the page has it (continuation lines joined)

    @property
    def command(self) -> str:
        return re.split(r"\s#", self.line, maxsplit=1)[0].strip()

    @property
    def ends(self) -> tuple[int, list[str]]:
        said = re.search(r"#\s*ends:\s*exit (\d+)(.*)$", self.line)
        return (int(said.group(1)), re.findall(r'"([^"]+)"', said.group(2))) if said else (0, [])


def blocks():
    """(page, line of the fence, marker or None, body) of every fenced block."""
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            before = m.group("before").rstrip("\n").rsplit("\n", 1)[-1]
            lineno = text.count("\n", 0, m.start("body"))
            yield page, lineno, MARKER.search(before), m.group("body")


def commands(body: str) -> list[tuple[int, str]]:
    """The `suite` lines of a block (offset, text), a synopsis' indented continuation lines joined on."""
    found: list[list] = []
    for k, raw in enumerate(body.splitlines()):
        if found and raw[:1].isspace() and raw.strip().startswith("["):
            found[-1][1] += " " + raw.strip()
            continue
        m = COMMAND.search(raw.strip().split(" #", 1)[0]) if not raw.lstrip().startswith("#") else None
        if m:
            found.append([k, raw.strip()[raw.strip().index(m.group(1)):]])
    return [tuple(f) for f in found]


def examples() -> list[Example]:
    out = []
    for page, lineno, marker, body in blocks():
        for k, line in commands(body):
            where = f"{page.relative_to(REPO)}:{lineno + k + 1}"
            out.append(Example(where, f"{page.relative_to(REPO)}:{lineno}", marker.group(1) if marker else "", bool(marker and marker.group(2)), line))
    return out


def unmarked() -> list[str]:
    return [e.where for e in examples() if not e.mode]


def test_every_example_block_says_whether_it_runs_or_parses():
    assert examples(), "no `suite` example found: the extraction broke"
    assert unmarked() == [], "add <!-- example: run|parse|usage --> before each block (docs/architecture.md)"


def test_no_example_hides_in_an_indented_code_block():
    outside = [f"{page.relative_to(REPO)}:{text[:m.start()].count(chr(10)) + 1}"
               for page in PAGES for text in [FENCE.sub(lambda b: "\n" * b.group(0).count("\n"), page.read_text())]
               for m in re.finditer(r"^ {4,}suite [a-z][\w-]* [^:]", text, re.M)]
    assert outside == [], "fence these examples with a marker"


def usage_argv(command: str) -> list[str]:
    """A synopsis as one command line: brackets dropped, `...` dropped, a|b its first choice, a metavar
    (N, D, DIR) a 1 (a count, a path, a name alike)."""
    words = command.replace("[", " ").replace("]", " ").split()
    words = [w.split("|", 1)[0] for w in words if w != "..." and not w.endswith("...")]
    return ["1" if re.fullmatch(r"[A-Z][A-Z_]*", w) else w for w in words][1:]


def parse(example: Example):
    from suite import cli, runscope

    command = re.sub(r"<([^<>]+)>", lambda m: m.group(1).replace(" ", "_"), example.command)   # <placeholder>
    argv = usage_argv(command) if example.mode == "usage" else [w for w in shlex.split(command) if w != "..."][1:]
    try:
        args = cli.build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{example.where}: {example.command}: does not parse (exit {exc.code})")
    if args.command == "run":
        runscope.refuse_unused(args)      # an option the workload's kind would refuse: SuiteError names it
    return args


PARSED = [e for e in examples() if e.mode in ("parse", "usage", "run")]


@pytest.mark.parametrize("example", PARSED, ids=[e.where for e in PARSED])
def test_every_example_parses_with_the_real_parser(example, capsys):
    parse(example)
    assert capsys.readouterr().err == ""


def small(argv: list[str], bucket_name: str | None) -> list[str]:
    """The example at a small size: a training workload's datagen and run get SMALL / RUN_SMALL
    (an option the example gives stays as given), s3://bench/ becomes the test's bucket."""
    from suite.storage import workloads

    if bucket_name:
        argv = [a.replace("s3://bench/", f"s3://{bucket_name}/") for a in argv]
    workload = argv[argv.index("--workload") + 1] if "--workload" in argv else None
    if argv[0] in ("datagen", "run") and workload in workloads.names():
        extra = SMALL if argv[0] == "datagen" else RUN_SMALL
        given = {a for a in argv if a.startswith("--") and a != "--param"}
        k, keep = 0, []
        while k < len(extra):
            flag, n = extra[k], 2
            if flag not in given:
                keep += extra[k:k + n]
            k += n
        argv = [*argv, *keep]
    return argv


def newest_results_dir(cwd: Path) -> Path:
    found = [p for p in (cwd / "results").iterdir() if p.is_dir() and p.name not in ("data", "checkpoint-data")]
    return max(found, key=lambda p: p.stat().st_mtime_ns).relative_to(cwd)


def run_block(block: list[Example], run_cli, cwd: Path, bucket_name: str | None) -> None:
    for example in block:
        text = example.command
        if "<the results dir>" in text:
            text = text.replace("results/<the results dir>", str(newest_results_dir(cwd)))
        argv = small(shlex.split(text)[1:], bucket_name)
        code, out, err = run_cli(*argv)
        want_code, texts = example.ends
        said = out + err
        assert code == want_code, f"{example.where}: {' '.join(argv)}: exit {code}, the docs say {want_code}\n{said[-3000:]}"
        missing = [t for t in texts if t not in said]
        assert missing == [], f"{example.where}: {' '.join(argv)}: the docs quote {missing}, not in:\n{said[-3000:]}"


def run_blocks(s3: bool) -> list[list[Example]]:
    grouped: dict[str, list[Example]] = {}
    for e in examples():
        if e.mode == "run" and e.s3 == s3:
            grouped.setdefault(e.block, []).append(e)
    return list(grouped.values())


def test_the_local_run_examples_end_as_the_docs_say(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert len(run_blocks(s3=False)) >= 3, "the datasize and vdb-mini datagen examples are marked `run`"
    for block in run_blocks(s3=False):
        run_block(block, run_cli, tmp_path, None)


def test_the_s3_run_examples_end_as_the_docs_say(bucket, run_cli, tmp_path, monkeypatch):  # noqa: F811
    blocks_s3 = run_blocks(s3=True)
    assert blocks_s3, "docs/object-storage.md's example is marked `run s3`"
    monkeypatch.chdir(tmp_path)
    for block in blocks_s3:
        run_block(block, run_cli, tmp_path, bucket)
    # object-storage.md says where the v3.0 checkpoint goes without --results-dir: a fresh claimed dir
    leaves = sorted(tmp_path.glob("results/llama3-8b-8p-*/checkpointing/llama3-8b/*"))
    assert len(leaves) == 2 and not (tmp_path / "results" / "checkpointing").exists(), leaves
    assert not list(tmp_path.glob("results/*/.suite-claim"))


def test_the_extraction_and_the_checks_can_fail():
    """The machinery itself: a wrong flag fails the parse, an unknown choice too, a synopsis expands, an
    output line is not a command, a continuation line joins its synopsis, `# ends:` is read."""
    def ex(line, mode="parse"):
        return Example("x.md:1", "x.md:1", mode, False, line)

    with pytest.raises(pytest.fail.Exception, match="does not parse"):
        parse(ex("suite run --workload unet3d --accelerators 1 --no-such-flag"))
    with pytest.raises(pytest.fail.Exception, match="does not parse"):
        parse(ex("suite datagen --workload no-such-workload"))
    from suite.errors import SuiteError
    with pytest.raises(SuiteError, match="--miniature"):      # a checkpointing option with a training workload
        parse(ex("suite run --workload unet3d --accelerators 1 --miniature"))
    assert usage_argv("suite compare A B [C ...] [--format text|json] [--out DIR]") == \
        ["compare", "1", "1", "1", "--format", "text", "--out", "1"]
    body = "suite check: error: x\nsuite run --workload w [--a 1]\n    [--b 2]   # note\n# suite list\n"
    assert commands(body) == [(1, "suite run --workload w [--a 1] [--b 2]   # note")]
    assert ex('suite x  # ends: exit 1, "a b", "c"').ends == (1, ["a b", "c"]) and ex("suite x").ends == (0, [])
    assert ex("suite x --y 1   # a note").command == "suite x --y 1"
