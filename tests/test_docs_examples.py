"""Every `suite ...` example in README.md and docs/*.md code blocks runs here at a small size and ends
as the docs say; a synopsis parses with the real `suite` parser (docs/architecture.md, "Examples in the
docs", is the convention):

- `<!-- example: run [TAG ...] -->` before a fenced block: its `suite` lines run in order in a fresh
  working directory, each at a small size (`small` below: a training workload's datagen and run get
  smaller records, 2 epochs, 1 run, a 32 MiB cache budget, open division; a checkpointing run the
  miniature; a kv-cache run option 1, 1 trial of 4 s; a TPCx-AI run use case 1 on 1 process; a sweep
  2 epochs a run; `/mnt/...` and `/data...` paths go under the
  working directory); `results/<the results dir>` is the newest results dir. Each line ends as its
  `# ends: exit N, "text", ...` comment says (exit code, quoted text in the output), else exit 0; a
  `small: exit N, "text"` after it is what the line ends as at the test's small size (a full-size
  example whose miniature ends otherwise). Tags: `s3` (against the real local S3 server,
  `s3://bench/` a fresh bucket on it, the block's tools/s3-server.sh lines being the fixture's),
  `netns` (two network-namespace hosts of the test's own in place of suite-h1/suite-h2, the block's
  tools/netns-hosts.sh lines being the fixture's), `dlio` (needs the DLIO engine: CI installs it),
  `tmpfs` (the working directory a fresh tmpfs, the /mnt and /data paths on the disk: two file systems),
  `as-given` (no size change: the hook supplies what makes it small), `hook=NAME` (tests/docs_hooks.py:
  what the reader does between the lines, e.g. fill in a TODO field, and what the block leaves behind).
- `<!-- example: usage -->`: a synopsis: `[...]` taken as given, `a|b` as its first choice, then parsed;
  the page beside it has a concrete `run` example.
- `<!-- example: parse -->`: each `suite` line parses (every flag exists, every value is allowed) and
  `suite run`'s per-kind option check accepts it. Every `run` line is parsed so too. (README's set-up
  lines run their `suite` part here; the install itself is tests/test_packaging.py's.)
A fenced block with a `suite` command and no marker fails, and so does an indented one, and so does a
`parse` block (test_every_page_..._runs_one_too: every example runs).
"""

import contextlib
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import docs_hooks
from tests.storage.s3.conftest import bucket, s3_server  # noqa: F401  (the real S3 server, for `run s3`)
from tests.training.run.test_hosts import netns_hosts  # noqa: F401  (two namespace hosts, for `run netns`)

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<before>.*?)^```[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!-- example: (run|parse|usage)((?: (?:s3|netns|dlio|tmpfs|as-given|hook=[\w-]+))*)\b[^>]*-->\s*$")
TAGS = ("s3", "netns", "dlio", "tmpfs", "as-given")
COMMAND = re.compile(r"(?:^|&&\s*)(suite [a-z][\w-]*(?:\s[^&;]*)?)$")   # not `suite check: error: ...` (output)
SMALL_RECORD_BYTES = 200_000        # one sample per file; a file of many samples: 20 kB each
RUN_SMALL = ["--division", "open", "--param", "train.epochs=2", "--param", "train.computation_time=0.005",
             "--param", "checkpoint.model_size=1000000", "--runs", "1"]
MINIATURE_SMALL = ["--memory-limit", "32MiB"]      # without --data-dir: a 32 MiB cache budget sizes the data
DATA_SMALL = ["--memory-limit", "256MiB"]          # with --data-dir: the ranks' cgroup
TPCX_SMALL = ["--use-cases", "1", "--processes", "1"]     # a subset: no AIUCpm, so INVALID (the page's `small:`)
# 4 s a trial: a 2-s trial of its 200 users served no request on a busy machine (a failed trial)
KV_SMALL = ["--option", "1", "--trials", "1", "--duration", "4", "--inter-option-delay", "0"]
CHECKOUT = ("tools/", "submissions/")             # paths in the checkout, as a reader runs them from it
LOCAL_PATH = re.compile(r"/(?:mnt|data)(?:/|$)")   # an example's /mnt/ckpt, /data/cf: under the working dir


@dataclass
class Example:
    where: str            # page:line
    block: str            # page:line of its block
    mode: str             # run, parse, usage
    tags: tuple           # s3, netns, dlio, as-given, hook=NAME
    line: str             # the command as the page has it (continuation lines joined)

    @property
    def s3(self) -> bool:
        return "s3" in self.tags

    @property
    def hook(self) -> str | None:
        return next((t.split("=", 1)[1] for t in self.tags if t.startswith("hook=")), None)

    @property
    def command(self) -> str:
        return re.split(r"\s#", self.line, maxsplit=1)[0].strip()

    @property
    def ends(self) -> tuple[int, list[str]]:
        """What the line ends as here, at the test's size: `small: exit N, "..."` if the page gives
        one (a full-size example whose small run ends otherwise), else `ends: exit N, "..."`, else 0."""
        said = re.search(r"#\s*ends:\s*exit (\d+)(.*)$", self.line)
        if not said:
            return 0, []
        full, _, small_said = said.group(2).partition("small:")
        small = re.match(r"\s*exit (\d+)(.*)$", small_said)
        if small:
            return int(small.group(1)), re.findall(r'"([^"]+)"', small.group(2))
        return int(said.group(1)), re.findall(r'"([^"]+)"', full)


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
            out.append(Example(where, f"{page.relative_to(REPO)}:{lineno}", marker.group(1) if marker else "",
                               tuple(marker.group(2).split()) if marker else (), line))
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


def small(argv: list[str], cwd: Path, bucket_name: str | None = None, hosts: list[str] | None = None,
          disk: Path | None = None) -> list[str]:
    """The example at a small size: a training workload's datagen gets small records, its run RUN_SMALL
    too, a checkpointing run the miniature, a kv-cache run KV_SMALL (an option the example gives stays
    as given); `...` dropped; /mnt, /data paths under `disk` (default: `cwd`), tools/ the checkout's; s3://bench/ the test's bucket, suite-h1/2
    the test's own namespace hosts."""
    from suite.training import workloads

    argv = [a for a in argv if a != "..."]
    argv = [str(disk or cwd) + a if LOCAL_PATH.match(a) else str(REPO / a) if a.startswith(CHECKOUT) else a
            for a in argv]
    if bucket_name:
        argv = [a.replace("s3://bench/", f"s3://{bucket_name}/") for a in argv]
    if hosts:
        argv = [re.sub(r"\bsuite-h(\d)\b", lambda m: hosts[int(m.group(1)) - 1], a) for a in argv]
    if argv[:2] == ["mlpstorage", "training"] and argv[2:3] in (["datagen"], ["run"]):
        return mlpstorage_small(argv)
    workload = argv[argv.index("--workload") + 1] if "--workload" in argv else None
    extra: list[str] = []
    if argv[0] in ("datagen", "run") and workload in workloads.names():
        accel = argv[argv.index("--accelerator-type") + 1] if "--accelerator-type" in argv else None
        spf = next(w.num_samples_per_file for a in [accel, *workloads.accelerators(workload)]
                   for w in [workloads.find(workload, a)] if w is not None)
        record = SMALL_RECORD_BYTES if spf == 1 else SMALL_RECORD_BYTES // 10
        extra = ["--param", f"dataset.record_length={record}", "--param", f"dataset.record_length_stdev={record // 4}"]
        if argv[0] == "run":
            extra += RUN_SMALL + (DATA_SMALL if "--data-dir" in argv else MINIATURE_SMALL)
    elif argv[0] == "run" and workload and workload.startswith("llama3"):
        extra = ["--miniature"]
    elif argv[0] == "run" and workload == "kv-cache":
        extra = KV_SMALL
    elif argv[0] == "run" and workload == "tpcx-ai":
        extra = TPCX_SMALL
    elif argv[0] == "sweep":
        extra = ["--division", "open", "--param", "train.epochs=2"]   # each point's runs 2 epochs (an open run)
    return [*argv, *given_or(extra, argv)]


# `suite mlpstorage training datagen|run` (docs/from-mlpstorage.md) at the small size: its flags take no
# suite option, so the values they give are replaced (1 accelerator, 1 GiB, one run, open) and its
# --params get small records (later keys win, as in mlpstorage)
MLPS_VALUES = {"--num-accelerators": "1", "--client-host-memory-in-gb": "1", "--loops": "1", "--num-processes": "2"}
MLPS_PARAMS = ["dataset.record_length_bytes=200000", "dataset.record_length_bytes_stdev=50000"]
MLPS_RUN = ["train.epochs=2", "train.computation_time=0.005", "model.model_size=1000000"]


def mlpstorage_small(argv: list[str]) -> list[str]:
    out = [MLPS_VALUES.get(argv[k - 1], a) if k else a for k, a in enumerate(argv) if a != "--closed"]
    if argv[2] == "datagen":
        return [*out, "--params", *MLPS_PARAMS, "dataset.num_files_train=8"]
    return [*out, "--open", *(["--loops", "1"] if "--loops" not in out else []), "--params", *MLPS_PARAMS, *MLPS_RUN]


def given_or(extra: list[str], argv: list[str]) -> list[str]:
    """`extra` less the options `argv` already gives (a --param is always added; a bare flag is one word)."""
    given = {a for a in argv if a.startswith("--") and a != "--param"}
    k, keep = 0, []
    while k < len(extra):
        flag = extra[k]
        n = 2 if k + 1 < len(extra) and not extra[k + 1].startswith("--") else 1
        if flag not in given:
            keep += extra[k:k + n]
        k += n
    return keep


def newest_results_dir(cwd: Path) -> Path:
    found = [p for p in (cwd / "results").iterdir() if p.is_dir() and p.name not in ("data", "checkpoint-data")]
    return max(found, key=lambda p: p.stat().st_mtime_ns).relative_to(cwd)


def run_block(block: list[Example], run_cli, cwd: Path, bucket_name: str | None = None,
              hosts: list[str] | None = None, hook=None, disk: Path | None = None) -> None:
    for k, example in enumerate(block):
        text = example.command
        if "<the results dir>" in text:
            text = text.replace("results/<the results dir>", str(newest_results_dir(cwd)))
        argv = shlex.split(text)[1:]
        argv = argv if "as-given" in example.tags else small(argv, cwd, bucket_name, hosts, disk)
        if hook is not None:
            argv = hook.before(k, argv, cwd)
        if isinstance(argv, docs_hooks.Ran):          # run by the fixture that runs exactly this line
            code, said, argv = argv.code, argv.said, shlex.split(text)[1:]
        else:
            code, out, err = run_cli(*argv)
            said = out + err
        want_code, texts = example.ends
        assert code == want_code, f"{example.where}: {' '.join(argv)}: exit {code}, the docs say {want_code}\n{said[-3000:]}"
        assert too_wide(said, cwd) == [], f"{example.where}: {' '.join(argv)}: lines over {WIDTH} columns"
        assert bad_verdicts(said) == [], f"{example.where}: {' '.join(argv)}: not the one verdict vocabulary"
        stray = [line for line in said.splitlines() if STRAY.match(line)]
        assert stray == [], f"{example.where}: {' '.join(argv)}: a host's stray output, unsaid what it is"
        flat = " ".join(said.replace(" \\\n", " ").split())   # a quote the 100-column wrap broke over two lines
                                                            # (a command continued with a backslash) still counts
        missing = [t for t in texts if " ".join(t.split()) not in flat]
        assert missing == [], f"{example.where}: {' '.join(argv)}: the docs quote {missing}, not in:\n{said[-3000:]}"
        if hook is not None:
            hook.after(k, argv, cwd, said)
    if hook is not None:
        hook.finish(cwd)


WIDTH = 100                      # no output line wider (issue 47), where a wrap between words could keep it so
STRAY = re.compile(r"^\[[\w.-]+\] [\d,. ]*$")     # issue 47: multi-host runs printed `[suite-h2] 0,0`
ERROR_LINE = re.compile(r"^suite [a-z][\w -]*: error: ")
USER_DIR = "/home/user/work"     # the test's working dir (/tmp/pytest-of-root/pytest-N/test_...0) as a reader's


def too_wide(said: str, cwd: Path) -> list[str]:
    """The output's lines over WIDTH columns, the working dir read as a reader's (USER_DIR); a line that
    is one word (a path, after its indent) cannot wrap and is left to the reader's terminal, and a bad
    input's error is one line by rule (STYLE.md 2: `suite X: error: ...`, exit 2)."""
    text = said.replace(str(cwd), USER_DIR).replace(str(cwd.parent), str(Path(USER_DIR).parent))
    return [line for line in text.splitlines() if len(line) > WIDTH and len(line.split()) > 1
            and not ERROR_LINE.match(line)]


def bad_verdicts(said: str) -> list[str]:
    """Verdict lines not in the one vocabulary (suite.rules.verdict), and TPCx-AI's old second words."""
    from suite.rules.verdict import PREFIX, parse as parse_verdict

    return [line for line in said.splitlines() if (line.startswith(PREFIX) and parse_verdict(line) is None)
            or re.search(r"\bNOT VALID\b|\bVALID, NOT PUBLISHABLE\b", line)]


def test_the_docs_say_verdicts_in_the_one_vocabulary():
    """A verdict the docs quote is one the runs print (issue 47: docs/tpcx-ai.md said `VALID, NOT
    PUBLISHABLE` where the run prints `OPEN NOT PUBLISHABLE (compliant)`)."""
    from suite.rules.verdict import parse as parse_verdict

    quoted = [(page.name, q) for page in PAGES for q in re.findall(r"`(verdict: [^`]+)`", page.read_text())]
    assert quoted and [(n, q) for n, q in quoted if "|" not in q and parse_verdict(q) is None] == []
    assert [page.name for page in PAGES if bad_verdicts(page.read_text())] == []


def run_blocks() -> list[list[Example]]:
    grouped: dict[str, list[Example]] = {}
    for e in examples():
        if e.mode == "run":
            grouped.setdefault(e.block, []).append(e)
    return list(grouped.values())


RUN_BLOCKS = run_blocks()


DURATION = re.compile(r"\b(?:about|~|in|takes?|under)\s*(?:a|an|\d+(?:\.\d+)?(?:-\d+)?)\s*(?:s|seconds?|min(?:utes?)?|h|"
                      r"hours?)\b|\ba (?:few )?(?:minutes?|seconds?)\b|time is the network's", re.I)


def said_duration(page: Path) -> list[bool]:
    """Per `run` block of the page: whether the two paragraphs before it say how long it takes."""
    text, out = page.read_text(), []
    for m in FENCE.finditer(text):
        marker = MARKER.search(m.group("before").rstrip("\n").rsplit("\n", 1)[-1])
        if marker and marker.group(1) == "run":
            before = "\n\n".join(text[max(0, m.start("body") - 1200):m.start("body")].split("\n\n")[-3:])
            out.append(bool(DURATION.search(" ".join(before.split()))))
    return out


def test_every_page_runs_an_example_and_says_how_long():
    """Issue 47: every docs page has a runnable example with its expected duration (history.md,
    sweeps.md, tpcx-ai.md had none; compare.md's ran two 11-minute runs unsaid)."""
    missing = [page.name for page in PAGES if not any(said_duration(page))]
    assert missing == [], "a `run` example with its duration (\"about 40 s\", \"under a second\") on each page"


def test_every_page_with_a_synopsis_or_a_parse_example_runs_one_too():
    """Pages whose commands are only synopses (usage) or parsed leave the reader without a command that
    works as it stands: every such page has a `run` block."""
    pages = {e.where.split(":")[0] for e in examples()}
    ran = {b[0].where.split(":")[0] for b in RUN_BLOCKS}
    assert sorted(pages - ran) == []
    assert [e.where for e in examples() if e.mode == "parse"] == [], "every example runs (a synopsis is `usage`)"


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=[b[0].block for b in RUN_BLOCKS])
def test_the_run_examples_end_as_the_docs_say(block, run_cli, tmp_path, monkeypatch, request):
    tags = block[0].tags
    if "dlio" in tags:
        from suite.engines import registry

        if registry.installed(registry.engine("dlio")) is None:
            pytest.skip("the DLIO engine is not installed here (`suite engine install dlio`; CI installs it)")
    bucket_name = request.getfixturevalue("bucket") if "s3" in tags else None
    hosts = request.getfixturevalue("netns_hosts") if "netns" in tags else None
    hook = docs_hooks.HOOKS[block[0].hook](request) if block[0].hook else None
    with working_dir(tmp_path, "tmpfs" in tags) as (cwd, disk):
        monkeypatch.chdir(cwd)
        run_block(block, run_cli, cwd, bucket_name, hosts, hook, disk)


@contextlib.contextmanager
def working_dir(tmp_path: Path, tmpfs: bool):
    """(the working directory, the disk the /mnt and /data paths go to): tmp_path for both, or with
    `tmpfs` a fresh 256 MiB tmpfs as the working directory (unmounted after) and tmp_path/disk."""
    if not tmpfs:
        yield tmp_path, None
        return
    work = tmp_path / "work"
    work.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", str(work)]).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield work, tmp_path / "disk"
    finally:
        os.chdir(tmp_path)
        subprocess.run(["umount", "-l", str(work)])


def test_the_extraction_and_the_checks_can_fail():
    """The machinery itself: a wrong flag fails the parse, an unknown choice too, a synopsis expands, an
    output line is not a command, a continuation line joins its synopsis, `# ends:` is read."""
    def ex(line, mode="parse"):
        return Example("x.md:1", "x.md:1", mode, (), line)

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
    assert ex('suite x  # ends: exit 0, "full" small: exit 1, "mini"').ends == (1, ["mini"])   # the size run here
    assert small(["run", "--workload", "llama3-8b", "--data-dir", "/mnt/c"], Path("/w")) == \
        ["run", "--workload", "llama3-8b", "--data-dir", "/w/mnt/c", "--miniature"]
    argv = small(["run", "--workload", "unet3d", "--memory-limit", "4GiB", "..."], Path("/w"))
    assert argv.count("--memory-limit") == 1 and argv[argv.index("--memory-limit") + 1] == "4GiB" and "..." not in argv
    assert ex("suite x --y 1   # a note").command == "suite x --y 1"
    w = Path("/tmp/pytest-of-root/pytest-1/test_x0")
    assert too_wide(f"wrote {w}/{'r' * 80}\n    {w}/{'p' * 120}\nsuite x: error: {'e ' * 60}", w) == \
        [f"wrote {USER_DIR}/{'r' * 80}"]
    assert bad_verdicts("verdict: VALID (compliant)\nTPCx-AI: NOT VALID\nverdict: OPEN (compliant)\n") == \
        ["verdict: VALID (compliant)", "TPCx-AI: NOT VALID"]
