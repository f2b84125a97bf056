"""docs/checker.md's table of the published v3.0 rules, generated from rules/v3.0/tree/*.yaml and the
kinds' rules for reference leaves (rules/v3.0/*-leaves.yaml): one row
per rule id (its Rules.md section, the fact it reads, its file, its test), then every training and
checkpointing rule of v3.0's Rules.md that no id of ours names: checked under another id, or not
checkable from a result's files, and why. `python -m suite.published.ruledoc docs/checker.md` rewrites
the table between its markers; tests/published/test_rules_v3.py holds the docs to it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from suite.published import check as v3check

BEGIN, END = "<!-- v3-rule-table: begin -->", "<!-- v3-rule-table: end -->"
TEST = "tests/published/test_rules_v3.py"

# Rules.md (v3.0) training and checkpointing rules no id of ours names: (section, staff name, how).
ELSEWHERE = (
    ("2.1.14", "datagenFiles", "not checked: the published release prunes logs to the staff's placeholder or "
     "leaves them out; what the figures need is required (`2.1.19-runFiles`), the rest is not"),
    ("2.1.15", "datagenDlioConfig", "not checked, as 2.1.14: dlio_config/ is not needed for any figure or fact"),
    ("2.1.16", "runResultsJson", "not checked: the published release carries no results.json; its figures are "
     "recomputed from the leaves"),
    ("2.1.18a", "runPickingSubsets", "a permission: the six kept runs are held to 2.1.17 and 2.1.18"),
    ("2.1.20", "runDlioConfig", "not checked, as 2.1.15"),
    ("2.1.22", "checkpointingResultsJson", "not checked, as 2.1.16"),
    ("2.1.24a", "checkpointingPickingSubsets", "a permission: the kept leaves are held to 2.1.23 and 2.1.24"),
    ("2.1.25", "checkpointingFiles", "in part: `2.1.19-runFiles` (summary.json); the logs as 2.1.14"),
    ("2.1.26", "checkpointingDlioConfig", "not checked, as 2.1.15"),
    ("3.1.1", "trainingVerifyDatasizeUsage", "by `2.1.12-trainingPhases` (the datasize leaf is there)"),
    ("3.1.2", "trainingRecalculateDatasetSize", "not checked here: the recalculation needs the workload's "
     "batch size and steps and the datasize invocation's client memory, which the published datasize leaf "
     "keeps only in part; the runs are held to its output (3.3.1); our own runs: suite/training/check/"),
    ("3.3.4", "trainingSingleHostClientLimit", "not checkable: nothing in a result says it is single-host "
     "except its host count itself"),
    ("3.3.5", "trainingDistributedDataAccessibility", "not checkable from files (Rules.md: 'not clear how "
     "to check this')"),
    ("3.3.7", "trainingNodeCapabilityConsistency", "not checkable: advisory in Rules.md, and a leaf records "
     "no per-node capability"),
    ("3.6.1", "trainingClosedSubmissionChecksum", "in part: `CHECK-02-poolImageIntegrity` recomputes each "
     "image's hash; the round's pinned reference digest is not published"),
    ("4.3.4", "checkpointAggregateAcceleratorMemory", "not checkable: the published checkpoint metadata records "
     "`accelerator: null`, so there is no accelerator memory to multiply"),
    ("4.6.1", "checkpointClosedMpiProcesses", "by `4.2.2-checkpointClosedProcessCount` (its id kept)"),
    ("4.7.2", "checkpointTotalTestDuration", "defines the reported duration; nothing a result can break"),
    ("4.7.3", "checkpointRemappingTimeReporting", "by `2.1.7-systemDescriptionSchema` "
     "(solution.capabilities.remap_time_in_seconds)"),
    ("4.7.4", "checkpointSimultaneousRwSupport", "by `2.1.7-systemDescriptionSchema` "
     "(solution.capabilities.simultaneous_write/read)"),
)


def rule_ids() -> list[str]:
    return [r.id for r in v3check.held_to().rules]


def _section(rule) -> tuple:
    nums = re.findall(r"\d+", rule.guideline.split()[0]) if rule.guideline else []
    return (0, tuple(int(n) for n in nums), rule.id) if nums else (1, (), rule.id)


def _fact(rule) -> str:
    out = f"`{rule.field}`"
    v = rule.value
    if isinstance(v, dict) and "fact" in v:
        out += f" vs `{v['fact']}`"
    elif isinstance(v, dict) and ("param" in v or "params" in v):
        out += f" vs param `{v.get('param') or ', '.join(v['params'])}`"
    elif v is not None:
        out += f" {rule.op} `{v}`"
    return out


def render() -> str:
    """The table, between its markers."""
    rows = [BEGIN, "", "| rule id | Rules.md section | grade | the fact | rule file | test |",
            "|---|---|---|---|---|---|"]
    for r in sorted(v3check.held_to().rules, key=_section):
        parts = Path(r.source).parts
        file = "/".join(parts[len(parts) - 1 - parts[::-1].index("rules"):])   # rules/<round>/[tree/]<file>
        grade = r.severity + (" (fix required)" if r.effect == "fix-required" else "")
        rows.append(f"| `{r.id}` | {r.guideline or '(ours)'} | {grade} | {_fact(r)}: {r.message} | {file} | "
                    f"{TEST}::test_rule_*[{r.id}] |")
    for section, name, how in ELSEWHERE:
        rows.append(f"| — | {section} {name} | — | {how} | — | — |")
    return "\n".join(rows + ["", END])


def listed_ids(text: str) -> set[str]:
    """The rule ids the table in `text` has a row of its own for."""
    body = text[text.index(BEGIN):text.index(END)] if BEGIN in text and END in text else ""
    return set(re.findall(r"^\| `([^`]+)` \|", body, re.M))


def write(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + render() + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + render() + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    import suite.kinds.registry  # noqa: F401  as the CLI: the kinds' facts (suite/<kind>/facts.yaml) join the vocabulary

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m suite.published.ruledoc docs/checker.md", file=sys.stderr)
        return 2
    write(Path(args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
