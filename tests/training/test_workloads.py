import pytest

from suite import files
from suite.kinds import registry
from suite.storage import workloads as catalogue
from suite.training import workloads
from suite.errors import WorkloadError


def test_every_workload_file_validates_against_its_schema():
    paths = sorted(catalogue.workload_dir().glob("*.yaml"))
    assert {p.stem for p in paths} >= {"unet3d", "resnet50", "cosmoflow", "bert"}
    for path in paths:
        doc = files.load_yaml(path)
        schema = registry.get(doc["benchmark"]).workloads.schema     # the schema its benchmark kind names
        assert files.schema_errors(doc, schema) == [], path


@pytest.mark.parametrize("name,accel,batch,compute,au,fmt", [
    ("unet3d", "a100", 7, 0.636, 0.90, "npz"),
    ("unet3d", "h100", 7, 0.323, 0.90, "npz"),
    ("unet3d", "v100", 4, 1.3604, 0.90, "npz"),
    ("resnet50", "a100", 400, 0.435, 0.90, "tfrecord"),
    ("resnet50", "h100", 400, 0.224, 0.90, "tfrecord"),
    ("cosmoflow", "a100", 1, 0.00551, 0.70, "tfrecord"),
    ("cosmoflow", "h100", 1, 0.00350, 0.70, "tfrecord"),
    ("bert", "v100", 48, 0.968, 0.90, "tfrecord"),
])
def test_published_values(name, accel, batch, compute, au, fmt):
    w = workloads.resolve(name, accel)
    assert (w.batch_size, w.computation_time_s, w.au_threshold, w.format) == (batch, compute, au, fmt)


def test_record_lengths_and_checkpoint():
    u = workloads.resolve("unet3d", "h100")
    assert (u.record_length_bytes, u.record_length_stdev_bytes) == (146_600_628, 68_341_808)
    assert u.checkpoint_model_size_bytes == 499_153_191 and u.checkpoint_after_epoch == 5
    assert u.read_threads == 4 and u.epochs == 5 and u.num_samples_per_file == 1
    r = workloads.resolve("resnet50", "h100")
    assert (r.record_length_bytes, r.num_samples_per_file, r.read_threads, r.computation_threads) == \
        (114_660.07, 1251, 8, 8)
    c = workloads.resolve("cosmoflow", "a100")
    assert (c.record_length_bytes, c.record_length_stdev_bytes, c.read_threads) == (2_828_486, 71_311, 4)
    b = workloads.resolve("bert", "v100")
    assert (b.record_length_bytes, b.num_samples_per_file, b.total_training_steps) == (2500, 313_532, 1000)


def test_unknown_key_names_file_and_key(tmp_path, monkeypatch):
    (tmp_path / "odd.yaml").write_text(
        (catalogue.workload_dir() / "cosmoflow.yaml").read_text().replace("name: cosmoflow", "name: odd")
        .replace("  batch_size: 1\n", "  batch_size: 1\n  batch_sizes: 2\n"))
    monkeypatch.setattr(catalogue, "workload_dir", lambda: tmp_path)
    with pytest.raises(WorkloadError) as err:
        workloads.load("odd")
    msg = str(err.value)
    assert "odd.yaml" in msg and "batch_sizes" in msg and "reader" in msg and "\n" not in msg


def test_unknown_workload_and_accelerator_list_the_valid_ones():
    with pytest.raises(WorkloadError, match="bert, cosmoflow, dlrm, dlrm-mini, flux, flux-mini, resnet50, retinanet, unet3d"):
        workloads.load("nope")
    with pytest.raises(WorkloadError, match="a100, h100"):
        workloads.resolve("resnet50", "v100")


def test_params_override_and_are_typed():
    params = workloads.parse_params(["reader.read_threads=16", "train.computation_time=0",
                                     "reader.odirect=true", "dataset.num_files_train=42"])
    w = workloads.resolve("unet3d", "h100", params)
    assert (w.read_threads, w.computation_time_s, w.odirect, w.num_files_train) == (16, 0.0, True, 42)
    assert w.config["reader"]["read_threads"] == 16


@pytest.mark.parametrize("pair,match", [
    ("reader.nope=1", "unknown key"),
    ("reader.read_threads=many", "expected integer"),
    ("reader.read_threads", "expected key=value"),
    ("reader.odirect=perhaps", "expected boolean"),
])
def test_bad_params(pair, match):
    with pytest.raises(WorkloadError, match=match):
        workloads.parse_params([pair])


def test_param_values_are_schema_checked():
    with pytest.raises(WorkloadError, match="read_threads"):
        workloads.resolve("unet3d", "h100", workloads.parse_params(["reader.read_threads=0"]))


def test_v3_unet3d_b200_writes_no_checkpoint_and_retinanet_has_a_small_miniature():
    """mlcommons/storage configs/dlio/workload/unet3d_b200.yaml: workflow.checkpoint False; h100 keeps its
    end-of-training checkpoint. retinanet's miniature is sized by a 64 MiB page-cache budget (workloads/retinanet.yaml)."""
    from suite.training.run.dlio_output import config

    b200, h100 = workloads.resolve("unet3d", "b200"), workloads.resolve("unet3d", "h100")
    assert b200.checkpoint_model_size_bytes is None and h100.checkpoint_model_size_bytes == 499153191
    assert config(b200, 1, "d")["workload"]["workflow"]["checkpoint"] is False
    assert workloads.resolve("retinanet", "b200").miniature_cache_budget_bytes == 64 * 1024**2
    assert workloads.resolve("unet3d", "b200").miniature_cache_budget_bytes is None
