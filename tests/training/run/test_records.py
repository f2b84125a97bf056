import pytest

from suite import files
from suite.training.run.records import RankEpoch, RankSteps, RunPlan


def test_rank_steps_round_trip_through_the_steps_schema(tmp_path):
    rs = RankSteps(rank=1, hostname="h", run_start_unix_s=1700000000.5,
                   epochs=[RankEpoch(epoch=1, step_start_s=[0.0, 0.5], step_end_s=[0.4, 0.9],
                                     step_compute_s=[0.3, 0.3], samples=14, bytes_read=1234, files_read=14,
                                     start_s=0.0, end_s=0.9)])
    files.write_json(tmp_path / "rank-1.json", rs.to_dict(), schema="steps")
    doc = files.load_json(tmp_path / "rank-1.json", schema="steps")
    assert doc["schema_version"] == 1 and doc["rank"] == 1
    back = RankSteps.from_dict(doc)
    assert back.epochs[0].steps == 2 and back.epochs[0].bytes_read == 1234


def test_steps_schema_rejects_a_missing_field():
    doc = RankSteps(rank=0, hostname="h", run_start_unix_s=0.0, epochs=[RankEpoch(epoch=1)]).to_dict()
    del doc["epochs"][0]["step_compute_s"]
    assert any("step_compute_s" in p for p in files.schema_errors(doc, "steps"))


def test_run_plan_round_trip():
    plan = RunPlan(run_dir="/r", workload="unet3d", accelerator="h100", num_accelerators=2, epochs=5,
                   steps_per_epoch=3, batch_size=7, computation_time_s=0.323, samples_per_file=1,
                   record_length_bytes=1.0, format="npz", read_threads=4, prefetch_size=2, transfer_size_bytes=0,
                   odirect=False, seed=100, file_shuffle=True, sample_shuffle=True, files=[["/a", 10]])
    assert RunPlan.from_dict(plan.to_dict()) == plan


@pytest.mark.parametrize("item", [["/d/a.npz"], ["/d/a.npz", -1], ["/d/a.npz", True], [3, 100], ("/d/a.npz", 100)])
def test_a_plan_with_a_malformed_file_entry_is_refused(item):
    doc = {"run_dir": "/r", "workload": "unet3d", "accelerator": "h100", "num_accelerators": 1, "epochs": 1,
           "steps_per_epoch": 2, "batch_size": 7, "computation_time_s": 0.3, "samples_per_file": 1,
           "record_length_bytes": 100, "format": "npz", "read_threads": 4, "prefetch_size": 2,
           "transfer_size_bytes": 0, "odirect": False, "seed": 100, "file_shuffle": True, "sample_shuffle": True,
           "files": [["/d/b.npz", 100], item]}
    with pytest.raises(ValueError, match=r"plan: files\[1\]: expected \[path, size_bytes\]"):
        RunPlan.from_dict(doc)
    doc["files"] = [["/d/b.npz", 100]]
    assert RunPlan.from_dict(doc).files == [["/d/b.npz", 100]]
