"""prepare.scanned: suite sweep's dataset scan, once for all its runs while the dataset is unchanged."""

import os

import pytest

from suite.errors import SuiteError
from suite.training import workloads
from suite.training.run import prepare
from tests.training.run.test_runner import make_data

PARAMS = ["dataset.num_samples_per_file=20", "dataset.record_length=1000", "dataset.record_length_stdev=0"]


@pytest.fixture
def data(tmp_path):
    return make_data(tmp_path / "data", "resnet50", PARAMS, 4)


@pytest.fixture
def scans(monkeypatch):
    """How many real scans ran (the real scan_dataset, counted)."""
    real, count = prepare.scan_dataset, []

    def counted(*a):
        count.append(1)
        return real(*a)
    monkeypatch.setattr(prepare, "scan_dataset", counted)
    return count


def workload():
    return workloads.resolve("resnet50", "h100", workloads.parse_params(PARAMS))


def test_an_unchanged_dataset_is_scanned_once(data, scans):
    memo = {}
    first = prepare.scanned(memo, data, workload())
    again = prepare.scanned(memo, data, workload())
    assert again == first and len(first[0]) == 4 and len(scans) == 1
    again[0].clear()                                   # a caller's copy: the memo keeps its own
    assert prepare.scanned(memo, data, workload()) == first and len(scans) == 1


def test_without_a_memo_every_call_scans(data, scans):
    prepare.scanned(None, data, workload())
    prepare.scanned(None, data, workload())
    assert len(scans) == 2


def test_a_changed_file_is_scanned_again_and_its_problem_found(data, scans):
    memo = {}
    prepare.scanned(memo, data, workload())
    victim = sorted((data / "train").iterdir())[1]
    with open(victim, "r+b") as f:                     # cut the last record short
        f.truncate(os.path.getsize(victim) - 7)
    with pytest.raises(SuiteError, match=victim.name):
        prepare.scanned(memo, data, workload())
    assert len(scans) == 2


def test_another_workload_shape_is_not_the_same_scan(data, scans):
    memo = {}
    prepare.scanned(memo, data, workload())
    other = workloads.resolve("resnet50", "h100", workloads.parse_params(PARAMS + ["reader.batch_size=4"]))
    prepare.scanned(memo, data, other)                 # batch size is not part of the records: reused
    assert len(scans) == 1
    wider = workloads.resolve("resnet50", "h100", workloads.parse_params(
        ["dataset.num_samples_per_file=20", "dataset.record_length=2000", "dataset.record_length_stdev=0"]))
    with pytest.raises(SuiteError):                    # other records: scanned again, and refused
        prepare.scanned(memo, data, wider)
    assert len(scans) == 2
