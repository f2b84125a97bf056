import pytest

from suite.training import workloads

from suite.training import datasize
from suite.errors import SuiteError

GIB = 1024**3


def files(name, accel, n, hosts, mem, ruleset):
    return datasize.compute(workloads.resolve(name, accel), n, hosts, mem, ruleset).num_files


def test_issue_check_values():
    assert files("resnet50", "h100", 16, 1, 64 * GIB, "v2.0") == 2557
    assert files("cosmoflow", "h100", 16, 1, 64 * GIB, "v2.0") == 121_477
    assert files("unet3d", "h100", 8, 2, 128 * GIB, "v1.0") == 28_000


def test_memory_rule_truncates_like_integer_arithmetic():
    # 5 x 128 GiB / 146,600,628 B = 4687.47 -> 4687 samples (floor), more than 500 x 7 x 1
    d = datasize.compute(workloads.resolve("unet3d", "h100"), 1, 1, 128 * GIB, "v1.0")
    assert d.memory_rule_samples == 4687 and d.num_files == 4687 and d.dictated_by == "memory"
    # one byte less memory than an exact multiple floors down
    rec = 146_600_628
    mem = rec * 1000 // 5  # exactly 1000 samples worth, then 1 byte less
    d = datasize.compute(workloads.resolve("unet3d", "h100"), 1, 1, mem - 1, "v1.0")
    assert d.memory_rule_samples == 999


def test_v2_floors_files_not_samples():
    # resnet50: 500 x 16 x 400 / 1251 = 2557.95 -> 2557 files (not rounded up)
    d = datasize.compute(workloads.resolve("resnet50", "h100"), 16, 1, 64 * GIB, "v2.0")
    assert d.dictated_by == "steps" and d.num_samples == 2557 * 1251


def test_v1_samples_then_files_for_multi_sample_files():
    # v1.0 resnet50, 1 accelerator, 1 host of 16 GiB: memory rule 5*16GiB/114660.07 = 749165.4 samples
    d = datasize.compute(workloads.resolve("resnet50", "a100"), 1, 1, 16 * GIB, "v1.0")
    assert d.memory_rule_samples == 749_165
    assert d.num_files == 749_165 // 1251 == 598


def test_v05_uses_100_steps_and_bert_fixed_steps():
    d = datasize.compute(workloads.resolve("unet3d", "v100"), 64, 1, 1 * GIB, "v0.5")
    assert d.steps == 100 and d.steps_rule_samples == 100 * 4 * 64 and d.num_files == 25_600
    b = datasize.compute(workloads.resolve("bert", "v100"), 8, 1, 1 * GIB, "v0.5")
    assert b.steps == 1000 and b.steps_rule_samples == 1000 * 48 * 8
    assert b.num_files == max(384_000, 5 * GIB // 2500) // 313_532


def test_hosts_multiply_memory():
    one = datasize.compute(workloads.resolve("cosmoflow", "h100"), 1, 1, 64 * GIB, "v1.0")
    two = datasize.compute(workloads.resolve("cosmoflow", "h100"), 1, 2, 64 * GIB, "v1.0")
    assert two.memory_rule_samples == 2 * 5 * 64 * GIB // 2_828_486 != 2 * one.memory_rule_samples - 1


def test_ruleset_must_suit_the_accelerator():
    with pytest.raises(SuiteError, match="expected one of v0.5, got v1.0"):
        datasize.compute(workloads.resolve("unet3d", "v100"), 1, 1, GIB, "v1.0")


@pytest.mark.parametrize("n,hosts,mem", [(0, 1, GIB), (1, 0, GIB), (1, 1, 0), (-1, 1, GIB)])
def test_non_positive_counts_refused(n, hosts, mem):
    with pytest.raises(SuiteError, match="expected a positive"):
        datasize.compute(workloads.resolve("unet3d", "h100"), n, hosts, mem, "v1.0")
