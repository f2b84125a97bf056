"""The code that ran against the code a submission stamps (issue 46, class 9).

A run records the code it ran (suite.harness.provenance: `provenance.json` and `.mlps-code-image` in each
run's directory, the md5-tree-v2 hash of the package as a pool image holds it). `suite submission add`
stamps code on what it adds: a v3.0 leaf points at a pool image (its own pointer, else the image `add`
makes of the installed package), a v1.0 tree gets the installed package at `package` time. Where the
recorded code is not the stamped code, or a run recorded none, `add` refuses (CodeMismatch: exit 1, one
line) unless told (`--allow-code-mismatch`); `suite check` then finds the leaf's record and its pointer
apart (rules/v3.0/tree/tree.yaml: TREE-04-codeThatRan).
"""

from __future__ import annotations

import re
from pathlib import Path

from suite import files
from suite.errors import ExitCode, ResultError, SuiteError, expected_got

RECORD_FILE = "provenance.json"          # suite.harness.provenance.RECORD_FILE (below us: the name, not the module)
POINTER_FILE = ".mlps-code-image"
POINTER_RE = re.compile(r"^md5-tree-v2:(?P<hash>[0-9a-f]{32})$")
ALLOW = "--allow-code-mismatch"


class CodeMismatch(SuiteError):
    """A run's code is not the code its submission would stamp (non-compliant, not bad input)."""

    exit_code = ExitCode.FAILED


def recorded(run_dir: Path, root: Path | None = None) -> str | None:
    """The hash of the code that ran, as the run's provenance.json records it; None without one. An
    unreadable or malformed record is a ResultError naming it."""
    path = Path(run_dir) / RECORD_FILE
    if not path.is_file() or path.is_symlink():
        return None
    doc = files.load_json(path, error=ResultError, schema="code-image", root=root or Path(run_dir))
    return str(doc["hash"])


def pointed(run_dir: Path) -> str | None:
    """The hash a leaf's .mlps-code-image names; None without one (or one that is not a pointer)."""
    path = Path(run_dir) / POINTER_FILE
    if not path.is_file() or path.is_symlink() or path.stat().st_size > 200:
        return None
    m = POINTER_RE.match(path.read_text(errors="replace").strip())
    return m.group("hash") if m else None


def problem(run_dir: Path, stamped: str, shown: Path | None = None, root: Path | None = None) -> str | None:
    """Why the code `stamped` on `run_dir` is not the code that ran there (one line), or None."""
    shown = Path(shown or run_dir)
    ran = recorded(run_dir, root)
    if ran is None:
        return expected_got(shown, RECORD_FILE, "the record of the code that ran (suite run writes it)",
                            f"none: the code stamped would be the code present now ({stamped}), not the run's")
    if ran != stamped:
        return expected_got(shown / RECORD_FILE, "hash", f"{stamped} (the code this submission stamps)",
                            f"{ran} (the code that ran)")
    return None


def refuse(problems: list[str], allowed: bool) -> None:
    """CodeMismatch with the first problem (and how many more) unless `allowed`."""
    if problems and not allowed:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CodeMismatch(f"{problems[0]}{more}; {ALLOW} stamps it anyway (suite check then finds it)")
