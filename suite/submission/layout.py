"""Submission-tree layouts per ruleset (the data: rules/<ruleset>/ruleset.yaml `submission`, read
through suite.rules.rulesets), and finding the tree a command is pointed at.

v1.0 and v2.0 (MLPerf Storage submission guidelines, "Directory Structure"):

    DIR/<Division>/<org>/code/
                        /results/<system>/<workload>-<accelerator>/run-<k>/...
                        /systems/<system>.json|.yaml  (+ <system>.pdf)
                        /generation_logs/<system>/<workload>-<accelerator>/

DIR/suite-submission.json records what `suite submission init` made (ruleset, division, org): it
is how the other subcommands know DIR is a submission tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import SuiteError, expected_got
from suite.layouts.manifest import MANIFEST  # noqa: F401  (the tree's files, named in one place)
from suite.rules import rulesets

MARKER = "suite-submission.json"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")


@dataclass(frozen=True)
class Layout:
    ruleset: str
    division_dirs: dict            # division -> directory name
    org_dirs: tuple[str, ...]      # made under <Division>/<org>/
    system_ext: str                # the system description's format
    system_schema: str             # suite/schemas/<name>.schema.json, the one the checker uses
    benchmark: str                 # results/<system>/<benchmark> (format fields: workload, accelerator)
    pooled: bool = False           # the published v3.0 layout (suite.published.submission): ruleset.yaml submission.layout

    @property
    def v1_system(self) -> bool:
        """The system description is v1.0's format (JSON: nodes, benchmark_hosts), not v2.0's (YAML:
        System, Nodes, PowerRequirements)."""
        return self.system_ext == "json"


def layout_of(ruleset: str) -> Layout:
    """The submission layout of `ruleset` (one `suite submission init` offers)."""
    sub = rulesets.get(ruleset).submission
    if sub is None or ruleset not in rulesets.submission_names():
        raise SuiteError(expected_got("ruleset", "value", f"one of {', '.join(rulesets.submission_names())}",
                                      repr(ruleset)))
    return Layout(ruleset, dict(sub.division_dirs), sub.org_dirs, sub.system_format, sub.system_schema,
                  sub.benchmark_dir, sub.layout == "pooled")


def check_name(what: str, value: str) -> str:
    """Org, system, workload and accelerator names become directory and file names: no separators,
    no dot-files (`--system ../../..` never names a place outside the tree)."""
    if not isinstance(value, str) or not NAME.match(value):
        raise SuiteError(expected_got(f"--{what}", "name", "letters, digits, '.', '_', '+', '-' "
                                      "(at most 100, not starting with a dot)", repr(value)[:120]))
    return value


@dataclass(frozen=True)
class Tree:
    """A submission tree made by `suite submission init`."""

    root: Path
    ruleset: str
    division: str
    org: str

    @property
    def layout(self) -> Layout:
        return layout_of(self.ruleset)

    @property
    def org_dir(self) -> Path:
        return self.root / self.layout.division_dirs[self.division] / self.org

    def system_file(self, system: str) -> Path:
        return self.org_dir / "systems" / f"{check_name('system', system)}.{self.layout.system_ext}"

    def benchmark_dir(self, system: str, workload: str, accelerator: str) -> Path:
        return self.org_dir / "results" / check_name("system", system) / self._benchmark(workload, accelerator)

    def generation_dir(self, system: str, workload: str, accelerator: str) -> Path:
        return self.org_dir / "generation_logs" / check_name("system", system) / self._benchmark(workload, accelerator)

    def _benchmark(self, workload: str, accelerator: str) -> str:
        """results/<system>/<this>: built from names a results dir gives, each one path component."""
        return check_name("benchmark", self.layout.benchmark.format(workload=check_name("workload", workload),
                                                                    accelerator=check_name("accelerator", accelerator)))

    def systems(self) -> list[str]:
        d = self.org_dir / "systems"
        ext = "." + self.layout.system_ext
        return sorted(p.name[:-len(ext)] for p in d.iterdir() if p.name.endswith(ext)) if d.is_dir() else []


def marker_doc(ruleset: str, division: str, org: str, version: str) -> dict:
    return {"schema_version": 1, "ruleset": ruleset, "division": division, "org": org, "suite_version": version}


def open_tree(root: Path) -> Tree:
    """The tree at `root`, or a one-line SuiteError saying why `root` is not one."""
    root = Path(root)
    marker = root / MARKER
    if not root.is_dir():
        raise SuiteError(expected_got(root, "DIR", "a submission tree made by `suite submission init`",
                                      "no such directory" if not root.exists() else "a file"))
    if not marker.is_file():
        raise SuiteError(expected_got(root, MARKER, "a submission tree made by `suite submission init`",
                                      "no such file"))
    doc = files.load_json(marker, schema="submission", root=root)
    if not isinstance(doc.get("org"), str) or not NAME.match(doc["org"]):
        raise SuiteError(expected_got(marker, "org", "a directory name (no separators, not a dot-file)",
                                      repr(doc.get("org"))[:120]))
    tree = Tree(root=root, ruleset=doc["ruleset"], division=doc["division"], org=doc["org"])
    if not tree.org_dir.is_dir():
        raise SuiteError(expected_got(marker, "org", f"a directory {tree.org_dir}", "none"))
    return tree
