"""The one voice every kind speaks in: the verdict vocabulary, the exit-code rule and the verdict line.

A result's verdict is closed, open or invalid (suite.rules.findings: the worst effect of its findings);
beside it the labels MINIATURE (a scaled-down run: never valid for submission), NOT PUBLISHABLE and
"fix required" (a documentation defect, suite.rules.findings). Every `suite run` ends with the line

    verdict: CLOSED|OPEN|INVALID[, fix required] [MINIATURE] [NOT PUBLISHABLE] (compliant|not compliant)

and every kind's `suite check` says the same line and exits with the same code:

- 0 only when compliant as asked: CLOSED for a closed run; OPEN only where the open division was
  asked; never a miniature, never with a fix required, never a run that failed;
- 1 otherwise (non-compliant, or the run failed);
- 2 (bad input) stays with the errors (suite.errors), never from here.

NOT PUBLISHABLE: a miniature, an INVALID result, or an OPEN one of a kind without an open division
(TPCx-AI below scale factor 1: valid, not publishable).
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.errors import ExitCode
from suite.rules.findings import VERDICTS

MINIATURE = "MINIATURE"
NOT_PUBLISHABLE = "NOT PUBLISHABLE"
FIX_REQUIRED = "fix required"
COMPLIANT, NOT_COMPLIANT = "compliant", "not compliant"
PREFIX = "verdict: "


@dataclass(frozen=True)
class Voice:
    """What is said of one result (or one run): its verdict and what stands beside it.

    division: the division asked (a run's --division; a result's recorded division); open_division:
    whether the kind has one (an OPEN result of a kind without one is not publishable); failed: the
    run did not finish all it was asked (always exit 1)."""

    verdict: str                        # closed | open | invalid
    miniature: bool = False
    division: str = "closed"
    fix_required: bool = False
    open_division: bool = True
    failed: bool = False

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict: expected one of {', '.join(VERDICTS)}, got {self.verdict!r}")

    @property
    def compliant(self) -> bool:
        """Compliant as asked: CLOSED, or OPEN where the open division was asked; never a miniature,
        a fix required or a failed run."""
        as_asked = self.verdict == "closed" or (self.verdict == "open" and self.division == "open")
        return as_asked and not (self.miniature or self.fix_required or self.failed)

    @property
    def publishable(self) -> bool:
        return not (self.miniature or self.verdict == "invalid"
                    or (self.verdict == "open" and not self.open_division))

    @property
    def code(self) -> ExitCode:
        return ExitCode.OK if self.compliant else ExitCode.FAILED

    def labels(self) -> tuple[str, ...]:
        """The headline labels: 'MINIATURE', 'OPEN', 'INVALID', 'NOT PUBLISHABLE' where they apply."""
        out = [MINIATURE] if self.miniature else []
        out += [self.verdict.upper()] if self.verdict != "closed" else []
        return (*out, *([NOT_PUBLISHABLE] if not self.publishable else []))

    def word(self) -> str:
        """'CLOSED', 'OPEN, fix required' ..."""
        return self.verdict.upper() + (f", {FIX_REQUIRED}" if self.fix_required else "")

    def tags(self) -> str:
        """'CLOSED MINIATURE NOT PUBLISHABLE': the verdict word and its labels, for a headline."""
        extra = [MINIATURE] if self.miniature else []
        extra += [NOT_PUBLISHABLE] if not self.publishable else []
        return " ".join([self.word(), *extra])

    def line(self) -> str:
        """The one verdict line: `verdict: CLOSED|OPEN|INVALID [MINIATURE] [NOT PUBLISHABLE] (compliant|not compliant)`."""
        return f"{PREFIX}{self.tags()} ({COMPLIANT if self.compliant else NOT_COMPLIANT})"


def headline(title: str, labels) -> str:
    """A page's (or a terminal headline's) title with its labels: 'unet3d h100 storage benchmark —
    MINIATURE · INVALID · NOT PUBLISHABLE'; the title alone where none applies."""
    labels = list(labels)
    return f"{title} — {' · '.join(labels)}" if labels else title


def worst(voices) -> Voice:
    """Several results said as one (a tree, a run set): the worst verdict, any miniature, any fix
    required, any failure; OPEN as asked only where every result short of CLOSED asked the open
    division (so the whole is compliant exactly when each part is)."""
    voices = list(voices)
    rank = {v: i for i, v in enumerate(VERDICTS)}
    verdict = max((v.verdict for v in voices), key=rank.__getitem__, default="closed")
    asked_open = all(v.division == "open" for v in voices if v.verdict != "closed")
    return Voice(verdict, miniature=any(v.miniature for v in voices), division="open" if asked_open else "closed",
                 fix_required=any(v.fix_required for v in voices),
                 open_division=all(v.open_division for v in voices), failed=any(v.failed for v in voices))


def parse(line: str) -> tuple[str, tuple[str, ...], bool] | None:
    """A verdict line read back: (verdict, labels, compliant), or None when `line` is not one."""
    if not line.startswith(PREFIX) or not line.endswith(")") or " (" not in line:
        return None
    head, tail = line[len(PREFIX):-1].rsplit(" (", 1)
    if tail not in (COMPLIANT, NOT_COMPLIANT):
        return None
    word = head.split(" ", 1)[0].rstrip(",").lower()
    if word not in VERDICTS:
        return None
    labels = tuple(x for x in (MINIATURE, NOT_PUBLISHABLE) if f" {x}" in f" {head}")
    return word, labels, tail == COMPLIANT
