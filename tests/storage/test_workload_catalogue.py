"""suite/storage/workloads.py: the catalogue of every workload file, naming no kind: names(benchmark),
load(name, schema, benchmark) held to the schema its kind gives, setting() read as written."""

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite.errors import WorkloadError
from suite.storage import workloads
from suite.training import workloads as training


def test_each_kind_finds_its_own_files_and_only_them():
    assert {"unet3d", "retinanet", "cosmoflow"} <= set(workloads.names("training"))
    assert workloads.names("checkpointing") == ["llama3-1t", "llama3-405b", "llama3-70b", "llama3-8b"]
    assert workloads.names("no-such-kind") == []
    assert workloads.load("llama3-8b", "checkpoint-workload", "checkpointing")["name"] == "llama3-8b"
    with pytest.raises(WorkloadError, match=r"workload 'unet3d': expected one of llama3-1t, llama3-405b"):
        workloads.load("unet3d", "checkpoint-workload", "checkpointing")
    with pytest.raises(WorkloadError, match="llama3-8b.yaml: benchmark: expected a training workload here, "
                                            "got checkpointing"):
        training.load("llama3-8b")


def test_a_setting_is_the_accelerators_block_over_the_base_as_resolve_reads_it():
    for name in ("unet3d", "retinanet", "cosmoflow"):
        for accel in training.accelerators(name):
            w = training.resolve(name, accel)
            assert workloads.setting(name, accel, "dataset", "record_length") == w.record_length_bytes
            assert workloads.setting(name, accel, "train", "computation_time") == w.computation_time_s
    assert workloads.setting("unet3d", "no-such-accelerator", "dataset", "record_length") is None
    assert workloads.setting("no-such-workload", "h100", "dataset", "record_length") is None
    assert workloads.setting("unet3d", "h100", "dataset", "no_such_key") is None
    assert workloads.setting(None, None, "dataset", "record_length") is None


_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
_tree = st.recursive(_leaf, lambda c: st.one_of(st.lists(c, max_size=3),
                                                 st.dictionaries(st.sampled_from(["dataset", "train", "h100",
                                                                                  "record_length", "x"]), c,
                                                                 max_size=3)), max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.dictionaries(st.sampled_from(["accelerators", "dataset", "train", "benchmark"]), _tree, max_size=4))
def test_setting_never_raises_on_a_file_of_any_shape(tmp_path, monkeypatch, doc):
    (tmp_path / "odd.yaml").write_text(yaml.safe_dump({"name": "odd", **doc}))
    monkeypatch.setattr(workloads, "workload_dir", lambda: tmp_path)
    workloads._load.cache_clear()        # a rewrite within one clock tick keeps its mtime
    for section in ("dataset", "train"):
        value = workloads.setting("odd", "h100", section, "record_length")
        accelerators = doc.get("accelerators")
        if not (isinstance(accelerators, dict) and isinstance(accelerators.get("h100"), dict)):
            assert value is None
