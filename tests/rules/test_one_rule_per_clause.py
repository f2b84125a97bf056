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


# --------------------------------------------------------------------------- checkpointing
# Our v3.0 checkpointing pairs (`suite run --workload llama3-*`: a write leaf and a read leaf) carry the
# reference tool's files, so the checkpointing judge holds them (rules/v3.0/checkpointing-leaves.yaml,
# suite/checkpointing/reference/ours.py); v2.0's rules holding the same clause are dropped by the round
# (rules/v3.0/checkpointing.yaml `drops:`), v3.0's own restatements are gone from its files.
CHECKPOINTING = {
    "4.3.5 subset mode: llama3-8b with 8 processes": ("4.3.5-checkpointSubsetRunValidation",
                                                      {"checkpoint-subset-8-processes", "checkpoint-subset-8b-only"}),
    "4.6.1 (Table 2) the closed process count": ("4.2.2-checkpointClosedProcessCount", {"checkpoint-closed-processes"}),
    "4.3.6 summary.json re-derived from the ranks' records": ("4.3.6-checkpointSummaryRederived",
                                                               {"checkpoint-leaf-summary-rederived"}),
    "4.3.3 the checkpoint size is the model's layout": ("4.3.3-checkpointSizeMatchesModel", {"checkpoint-leaf-size-layout"}),
    "4.4.2 checkpoints and results on different file systems": ("4.4.2-checkpointFilesystemCheck",
                                                                 {"checkpoint-leaf-filesystem"}),
    "4.7.1 the read within 30 s of the write": ("4.7.1-checkpointCacheFlushValidation", {"checkpoint-read-window"}),
    "4.7.1 closed: a write of 10 then a read of 10, or one combined": ("4.7.1-checkpointInvocationStructure", set()),
    "4.3.2 every checkpoint fsync'd": ("4.3.2-checkpointFsyncVerification", {"checkpoint-fsync"}),
    "4.6.2 at least 4 processes per host": ("4.6.2-checkpointClosedAcceleratorsPerHost", {"checkpoint-processes-per-host"}),
    "4.6.4 processes a multiple of TP x PP": ("4.6.4-checkpointOpenSubmissionScaling", {"checkpoint-processes-multiple"}),
}
# what only `suite run` records: rules of their own beside the clauses' (the run set, the ranks, the handoff)
CHECKPOINTING_EVIDENCE = {
    "checkpoint-runs": "checkpoint_run_set.json's runs, complete",
    "checkpoint-read-after-write": "the read names the write it read (written_by) and started after it",
    "checkpoint-miniature": "the run set's miniature flag",
    "checkpoint-run-complete": "run-<k>/results.json's status",
    "checkpoint-read-cache-drop": "the harness's page-cache drop before the read, on every host",
    "checkpoint-read-not-cached": "mincore's resident bytes of the checkpoint before the read",
    "checkpoint-figures-recomputed": "results.json's figures against the ranks' records",
    "checkpoint-rank-records": "each rank's records against themselves and the layout",
    "checkpoint-run-set-recomputed": "checkpoint_run_set.json against its runs",
    "checkpoint-leaf-files": "the published files beside our evidence (the timeseries with samples)",
    "checkpoint-handoff-recorded": "the read's handoff record",
    "checkpoint-cache-clear-3x": "the clear the handoff records performed when 4.3.1 asks for it",
    "checkpoint-cache-clear-consistent": "the clear's record against its own measurements",
}
# clauses our pairs meet that the judge holds only in part: v2.0's rules stay ours (10 writes and 10 reads in
# all, in both divisions, as mlpstorage's check_num_runs; the judge: closed's invocation structure)
CHECKPOINTING_OURS_ONLY = {"checkpoint-write-and-read", "checkpoint-count"}


def _ckpt_ours(division: str) -> set[str]:
    """Every rule id our v3.0 checkpointing pair is held to: the round's checkpointing files and the judge's."""
    from suite.checkpointing import check as checkpoint
    from suite.checkpointing.reference import ours

    own = engine.load_layers(ROUND, checkpoint.RULE_FILES[division], division).rules
    tree = engine.load_layers(ROUND, ("checkpointing.yaml",)).rules
    return {r.id for r in own + tree} | {r.id for r in ours.rules(ROUND).rules}


@pytest.mark.parametrize("division", ["closed", "open"])
def test_each_checkpointing_clause_is_one_rule_for_our_pairs_and_the_reference_leaves(division):
    from suite.checkpointing.reference import judge as ckpt_judge

    held = _ckpt_ours(division)
    reference = {r.id for r in ckpt_judge.rules(ROUND).rules}
    for clause, (one, before) in CHECKPOINTING.items():
        assert one in reference and one in held, clause
        assert not held & before, (clause, held & before)
    assert set(CHECKPOINTING_EVIDENCE) | CHECKPOINTING_OURS_ONLY <= held
    assert not (set(CHECKPOINTING_EVIDENCE) | CHECKPOINTING_OURS_ONLY) & reference


def test_the_checkpointing_rules_dropped_are_v2_rules_the_rest_gone_from_the_files():
    doc = yaml.safe_load((paths.REPO / "rules" / ROUND / "checkpointing.yaml").read_text())
    dropped = set(doc["drops"])
    v2 = {r.id for d in ("closed", "open")
          for r in engine.load_layers("v2.0", ("checkpointing-closed.yaml", "checkpointing.yaml"), d).rules}
    before = set().union(*(b for _, b in CHECKPOINTING.values()))
    assert dropped <= v2 and dropped == (before & v2) - {"checkpoint-closed-processes"}   # v2.0's closed file: not v3.0's
    v3_files = [p for p in (paths.REPO / "rules" / ROUND).glob("checkpointing*.yaml")]
    written = {r.get("id") for p in v3_files for r in (yaml.safe_load(p.read_text()).get("rules") or [])}
    assert not written & before                                  # v3.0's restatements are gone


def test_our_pair_breaking_a_clause_is_found_by_its_one_rule(tmp_path):
    """A real miniature pair (tests/data/checkpoint/v3-llama3-8b-miniature) with one clause broken: the
    checkpointing kind's check finds the judge's id, never one of the ids that held the clause before."""
    import checkpoint_builders as cb
    from suite.checkpointing import check as checkpoint

    old = set().union(*(b for _, b in CHECKPOINTING.values()))
    clean = cb.checkpoint_tree_v3(tmp_path / "clean")
    found = {f.rule_id for f in checkpoint.check(clean, ROUND).all_findings()}
    assert not found & {one for one, _ in CHECKPOINTING.values()}, found      # the passing case
    assert set(cb.JUDGED_V3) <= {one for one, _ in CHECKPOINTING.values()}
    for rule_id, edit in cb.JUDGED_V3.items():
        root = cb.checkpoint_tree_v3(tmp_path / rule_id)
        edit(root)
        result = checkpoint.check(root, ROUND)
        ids = {f.rule_id for f in result.all_findings()}
        assert rule_id in ids and not ids & old, (rule_id, sorted(ids))
        assert result.verdict == "invalid"
