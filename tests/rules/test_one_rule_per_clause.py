"""One rule per Rules.md clause (issue 44): every clause that our own v3.0 training series and the reference
tool's leaves both meet is one rule id, in the kind's rules for reference leaves
(rules/v3.0/training-leaves.yaml), whichever leaves it judges; the v2.0 rules that held the same clause for
our runs are dropped by the round (rules/v3.0/common.yaml `drops:`); what only our runs record adds rules
of its own (EVIDENCE). No rule id or fact is named for a round."""

from __future__ import annotations

import re

import pytest
import yaml

import paths
from suite.rules import engine
from suite.training.reference import judge

# clause -> (its one rule id, the ids that held it for our runs before)
CLAUSES = {
    "2.1.17 six runs, the first a warm-up": ("2.1.17-trainingRunCount", {"structure-run-count", "warmup-run"}),
    "2.1.17 the warm-up is the earliest leaf": ("2.1.17-trainingWarmupFirst", {"ours3-warmup-first"}),
    "2.1.17 every run on one host": ("2.1.17-trainingRunsOneHost", {"ours3-one-host"}),
    "2.1.17 distinct runs": ("2.1.17-trainingRunsDistinct", {"structure-runs-distinct-start",
                                                             "structure-runs-distinct-summaries"}),
    "2.1.18 no gap longer than the run": ("2.1.18-runTimestampGap", {"ours3-run-gap"}),
    "3.1.2 the dataset size": ("3.1.2-trainingDatasetSize", {"dataset-size", "dataset-size-tolerance",
                                                             "dataset-size-steps"}),
    "3.3.1 one dataset for every run": ("3.3.1-trainingRunDatasetsEqual", {"consistency-num-files"}),
    "3.3.2 the AU threshold": ("3.3.2-trainingAcceleratorUtilizationCheck", {"au-threshold"}),
    "3.3.6 the same accelerators per node": ("3.3.6-trainingIdenticalAcceleratorsPerNode",
                                             {"structure-accelerators-per-host"}),
    "3.6.2 closed parameters": ("3.6.2-trainingClosedSubmissionParameters", {"closed-params"}),
    "3.6.2 closed parameter values": ("3.6.2-trainingClosedParameterValues", {"closed-effective-params"}),
    "3.6.3 open parameters": ("3.6.3-trainingOpenSubmissionParameters", {"open-params"}),
}
# what only `suite run` records: more evidence for a clause, a rule of its own beside the clause's
EVIDENCE = {
    "3.4.2-fsSeparationDevicesAgree": "fs_separation.json's flags against the device ids our probe records",
    "2.1.6-codeImageMatchesProvenance": "the code pointer against provenance.json, which only our runs write",
}
ROUND = "v3.0"


def _ours(division: str, workload: str) -> set[str]:
    """Every rule id our v3.0 training series is held to: the round's layers and the judge's."""
    return {r.id for r in engine.load(ROUND, division, workload).rules} | {r.id for r in judge.rules(ROUND).rules}


@pytest.mark.parametrize("division", ["closed", "open"])
@pytest.mark.parametrize("workload", ["unet3d", "retinanet"])
def test_each_clause_is_one_rule_for_our_series_and_the_reference_leaves(division, workload):
    held = _ours(division, workload)
    reference = {r.id for r in judge.rules(ROUND).rules}
    for clause, (one, before) in CLAUSES.items():
        assert one in reference, clause                    # the reference leaves' rule ...
        assert one in held, clause                         # ... is ours too
        assert not held & before, (clause, held & before)  # and no other id holds the clause for us
    assert set(EVIDENCE) <= held


def test_the_dropped_rules_exist_in_the_round_extended_and_only_those():
    doc = yaml.safe_load((paths.REPO / "rules" / ROUND / "common.yaml").read_text())
    dropped = set(doc["drops"])
    v2 = {r.id for d in ("closed", "open") for r in engine.load("v2.0", d, "unet3d").rules}
    assert dropped <= v2
    before = set().union(*(b for _, b in CLAUSES.values()))
    assert dropped == {i for i in before if not i.startswith("ours3-")}    # the ours3-* rules are gone from the files


def test_a_dropped_rule_is_gone_from_the_round_but_not_from_the_one_it_extends():
    assert "au-threshold" in {r.id for r in engine.load("v2.0", "closed", "unet3d").rules}
    assert "au-threshold" not in {r.id for r in engine.load(ROUND, "closed", "unet3d").rules}


def test_no_rule_id_nor_fact_is_named_for_a_round():
    ids, facts = [], []
    for p in sorted((paths.REPO / "rules").rglob("*.yaml")):
        doc = yaml.safe_load(p.read_text()) or {}
        ids += [r.get("id", "") for r in doc.get("rules") or [] if isinstance(r, dict)]
        facts += [f.get("name", "") for f in doc.get("facts") or [] if isinstance(f, dict)]
    assert facts and ids
    assert [i for i in ids if re.match(r"ours\d|v\d", i)] == []
    assert [f for f in facts if re.match(r"(v\d|ours\d)\.", f)] == []
