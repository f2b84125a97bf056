"""What a benchmark kind is: its name, the command-line options it uses, and its run, datasize,
result recognition, check, metrics and report page. The commands (suite/commands/) ask the kind
of the workload (`benchmark:` in its file) or of the result on disk, never a name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class Claim:
    """How specific a claim on a path is (a kind's `recognises`, a layout's `claims`): the most specific
    wins, whatever the order of registration (suite.kinds.registry.owner_of); two equal claims are a
    one-line error. NONE: not its; ANY: a catch-all (any directory, any file no other claims); WITHIN: it
    lies inside one of its own (a layout's tree); OWN: its own result files, or a folder named for it;
    TREE: a layout's tree, a division or an organisation of one (the layout's whatever lies below)."""

    NONE, ANY, WITHIN, OWN, TREE = 0, 1, 2, 3, 4


def strength(answer) -> int:
    """A `recognises` answer as a Claim: True is OWN, False or None is NONE."""
    if answer is True:
        return Claim.OWN
    return int(answer or 0)


@dataclass(frozen=True)
class Checked:
    """What `suite check` shows for a result: the report (text or JSON), the one line said when the
    report goes to --output instead, and the exit code."""

    out: str
    summary: str
    code: int
    verdict: str = ""            # closed | open | invalid | valid (TPCx-AI); "" where a kind does not say
    voice: object = None         # suite.rules.verdict.Voice: what the verdict line says (None: made from verdict, code)
    result: object = None        # the structured result behind the report, where the kind has one (a
                                 # suite.check.result.CheckResult): what a layout combines its nodes' checks from

    def said(self):
        """The Voice of this check: the kind's own, else one read from its verdict and exit code."""
        from suite.rules.verdict import Voice

        if self.voice is not None:
            return self.voice
        verdict = {"valid": "closed"}.get(self.verdict, self.verdict if self.verdict in ("closed", "open") else "invalid")
        return Voice(verdict, division="open" if self.code == 0 else "closed", failed=self.code != 0)


@dataclass(frozen=True)
class Samples:
    """One figure of one result, as `suite compare` needs it: the per-run values the rules count
    (warm-up runs left out, as the rules do), each run's per-epoch values (the epochs the rules
    count; empty where a kind has no epochs) and each run's first-epoch-to-later ratio (None where
    not measured). `higher_is_better`: throughput yes, a latency or a duration no."""

    name: str                                  # e.g. au_percentage, samples_per_second
    label: str                                 # how a table heads it: "AU %", "samples/s"
    higher_is_better: bool
    per_run: tuple[float, ...]
    per_epoch: tuple[tuple[float, ...], ...] = ()
    first_to_later: tuple[float, ...] = ()
    source: str = "recomputed"                 # suite.numbers: recomputed (from the lowest records) or claimed


@dataclass(frozen=True)
class Measured:
    """One result's figures for `suite compare`: what it is (`identity`: the fields two results must
    share to be compared: workload, accelerator, dataset size, ruleset, division, scale factor ...;
    None where unknown), its system's description (flat dotted keys -> text) and its figures."""

    path: Path
    kind: str
    label: str
    identity: dict
    system: dict
    figures: tuple[Samples, ...]
    notes: tuple[str, ...] = ()                # what was left out and why (a warm-up run, runs without numbers)
    when: str | None = None                    # the result's start time (ISO 8601, UTC), for a series
    source: str | None = None                  # where it comes from when not from `path` alone (a history
                                               # baseline: its store and series); shown instead of the path


def identity_key(kind: str, identity: dict) -> str:
    """What makes two results like for like, as one text: the kind and its identity fields that are
    stated (None is unknown: a field neither result states is no difference). `suite compare` refuses
    results whose keys differ (suite.compare.comparable); a `suite history` series is the results of
    one key and one system (suite.history.series.key_of): the two agree by construction."""
    import json

    stated = {str(k): v for k, v in identity.items() if v is not None}
    return json.dumps([kind, stated], sort_keys=True, default=str, separators=(",", ":"))


@dataclass(frozen=True)
class Options:
    """The `suite run` / `suite datasize` options of a kind: the dests it uses beyond the command's common
    ones (run: workload, data dir, results dir, engine; datasize: workload, accelerators, client hosts, host
    memory, ruleset, format), an option some kind declares and this one does not being refused for it
    (suite/runscope.py); and the options it adds (an option is added by one kind; another that uses it
    declares it only)."""

    run: tuple[str, ...] = ()
    datasize: tuple[str, ...] = ()
    add_run: Callable[[object], None] | None = None
    add_datasize: Callable[[object], None] | None = None


@dataclass(frozen=True)
class Workloads:
    """A kind's workload files: the schema they are held to (suite/schemas/<schema>.schema.json), how an
    error names them (default: their names), its own folder of them beside workloads/, and its part of
    `suite list workloads`."""

    schema: str | None = None
    shown: str | None = None
    dir: Path | None = None
    listing: Callable[[], str] | None = None


@dataclass(frozen=True)
class Sweeps:
    """`suite sweep` and `suite sizing` for a kind whose workloads sweep the accelerator count: run(args)
    the sweep (its options checked by suite/commands/sweep.py), sizing(args) the bandwidth and dataset
    for N accelerators; each -> exit code."""

    run: Callable[[object], int]
    sizing: Callable[[object], int]


@dataclass(frozen=True)
class Submission:
    """`suite submission` for a kind that makes a submission tree: make(args, ruleset, the other kinds'
    check of a leaf it does not know: suite.kinds.tree.handover) -> lines said; the layout it makes
    (ruleset.yaml submission.layout)."""

    make: Callable[[object, str, object], list[str]]
    layout: str


@dataclass(frozen=True)
class Kind:
    """One benchmark kind: what it is, in at most 20 fields (a facet of several fields is a record of its
    own: Options, Workloads, Sweeps, Submission). The callables import their implementation when
    called, so building the command line stays instant.

    recognises: every kind and layout is asked (suite.kinds.registry.owner_of); the most specific claim
    wins (a Claim; True is Claim.OWN), two equal ones are a one-line error; training claims any directory
    at Claim.ANY (the catch-all). datasize set: `suite datasize` offers its workloads; datagen set:
    `suite datagen`; sweeps set: `suite sweep` and `suite sizing`. A new benchmark: a module here with its
    KIND, listed in registry.py (or registered), its workload files with `benchmark: <name>`, its rule files;
    beside its kind module (no field: suite.kinds.registry.folder) the facts its rules name (facts.yaml) and
    the engines it drives (engines.py's ENGINES).
    """

    name: str
    run: Callable[[object], int]                     # suite run (args) -> exit code
    recognises: Callable[[Path], int]                # is this file or directory one of its results? (a Claim)
    check: Callable[[Path, object], Checked]         # suite check (path, args); a layout handing it the benchmark
                                                     # nodes its walk found: args.nodes (that tree, its nodes only)
                                                     # and args.format "result" (Checked.result, no report)
    metrics: Callable[[Path, str], int]              # suite metrics (path, "text" | "json"): prints (its JSON's
                                                     # benchmarks: suite.kinds.combine's docstring)
    report_page: Callable[[Path, object], object]    # suite report (path, args) -> suite.report.content.Page
    options: Options = Options()                     # its run / datasize options
    workloads: Workloads = Workloads()               # its workload files
    datasize: Callable[[object], int] | None = None  # suite datasize (args); None: the kind sizes no dataset
    datagen: Callable[[object], int] | None = None   # suite datagen (args); None: its data is written by suite run
    sweeps: Sweeps | None = None                     # suite sweep and suite sizing of its workloads
    result_files: tuple[str, ...] = ()               # names that mark a directory as one of its results
    takes: str = "tree"                              # what its check takes: "tree" (every result of it under PATH
                                                     # at once) or "result" (one result per call)
    check_reads: Callable[[Path], list[Path]] | None = None   # what its check of PATH reads beyond PATH (the tree
                                                     # around a leaf): suite check --output is refused inside any
    measured: Callable[[Path], list[Measured]] | None = None   # suite compare: every result under a path, its figures
                                                     # (the first its headline: suite history list shows it)
    runs_on: str | None = None                       # what a result of it runs on, the key of its identity or
                                                     # system that counts it: "accelerators" (shown with their
                                                     # type), "processes"; None: nothing counted (shown as -)
    defers_check: Callable[[Path, object], bool] | None = None  # suite check (path, args): True where the path is
                                                     # the catch-all kind's to check (another round's rules asked
                                                     # for; a file that is not its own): suite.kinds.tree hands it over
    submission: Submission | None = None             # suite submission: the tree it makes
    table_rows: Callable[[Path], list[tuple[str, dict]]] | None = None   # suite report of a published tree: the
                                                     # (table, row) of each of its results under a path (the published
                                                     # results tables' columns of that table, its verdict and findings)
    reference_judge: Callable | None = None          # its judgement of a benchmark node of the reference tool's leaves
                                                     # a layout found ((node, org, system, round, root) -> (findings,
                                                     # row)): the same wherever the node sits (suite.layouts.pooled.JUDGES)

    @property
    def checks_trees(self) -> bool:
        return self.takes != "result"
