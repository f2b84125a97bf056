import json

import pytest

from suite.training import figures as metrics

# MLPerf Storage v0.5, DDN AI400X2, unet3d, run-1 (published): per-epoch AU and samples/s
DDN_AU = [99.78086413375648, 99.77490637471472, 99.77836615960462, 99.77803864103272, 99.77253103934164]
DDN_TP = [2.9073337566277444, 2.9091441708062145, 2.9102331230783505, 2.9119334927951623, 2.909116999016811]


def test_run_metric_reproduces_the_published_ddn_v05_run():
    m = metrics.run_metric(DDN_AU, DDN_TP, 146_600_628, 0.90)
    assert m["train_au_mean_percentage"] == pytest.approx(99.77694126969003, rel=1e-12)
    assert m["train_au_stdev_percentage"] == pytest.approx(0.0029056609197455345, rel=1e-9)
    assert m["train_throughput_mean_samples_per_second"] == pytest.approx(2.9095523084648565, rel=1e-12)
    assert m["train_throughput_stdev_samples_per_second"] == pytest.approx(0.0015107342764863628, rel=1e-9)
    assert m["train_io_mean_MB_per_second"] == pytest.approx(406.7823368261315, rel=1e-12)
    assert m["train_io_stdev_MB_per_second"] == pytest.approx(0.21121463172342914, rel=1e-9)
    assert m["train_au_meet_expectation"] == "success"


def test_metric_block_prints_like_dlio():
    block = metrics.metric_block(1, metrics.run_metric(DDN_AU, DDN_TP, 146_600_628, 0.90))
    assert block.splitlines() == [
        "[METRIC] Number of Simulated Accelerators: 1",
        "[METRIC] Training Accelerator Utilization [AU] (%): 99.7769 (0.0029)",
        "[METRIC] Training Throughput (samples/second): 2.9096 (0.0015)",
        "[METRIC] Training I/O Throughput (MB/second): 406.7823 (0.2112)",
        "[METRIC] train_au_meet_expectation: success",
    ]


def test_threshold_fails_below():
    assert metrics.run_metric([89.99, 90.0], [1, 1], 1, 0.90)["train_au_meet_expectation"] == "fail"
    assert metrics.run_metric([90.0, 90.0], [1, 1], 1, 0.90)["train_au_meet_expectation"] == "success"


def test_epoch_au_excludes_the_first_step():
    # step 0 waits 5 s for data; steps 1..3 compute 1 s each and wait 0.25 s
    starts = [0.0, 6.0, 7.25, 8.5]
    ends = [6.0, 7.25, 8.5, 9.75]
    compute = [1.0, 1.0, 1.0, 1.0]
    assert metrics.epoch_au_from_steps(starts, ends, compute) == pytest.approx(100 * 3 / 3.75)


def test_mean_pstdev_is_population():
    assert metrics.mean_pstdev([1, 3]) == (2.0, 1.0)
    with pytest.raises(ValueError):
        metrics.mean_pstdev([])


def test_epoch_throughput_from_steps_counts_every_step_over_the_wall_time():
    from suite.training.figures import epoch_throughput_from_steps

    # 3 steps of batch 7 from t=1.0 to t=4.0: 21 samples / 3 s (DLIO v1.0 keeps the first step here)
    assert epoch_throughput_from_steps([1.0, 2.0, 3.0], [2.0, 3.0, 4.0], 21) == pytest.approx(7.0)
    assert epoch_throughput_from_steps([], [], 0) == 0.0


def test_epoch_from_ranks_averages_au_and_sums_throughput():
    from suite.training.figures import epoch_from_ranks

    r0 = {"step_start_s": [0.0, 1.0, 2.0], "step_end_s": [1.0, 2.0, 3.0], "step_compute_s": [0.9, 0.9, 0.9], "samples": 3}
    r1 = {"step_start_s": [0.0, 1.0, 2.0], "step_end_s": [1.0, 2.0, 3.0], "step_compute_s": [0.5, 0.5, 0.5], "samples": 3}
    au, tput = epoch_from_ranks([r0, r1])
    assert au == pytest.approx((90.0 + 50.0) / 2)
    assert tput == pytest.approx(2.0)


def test_every_metric_key_written_is_in_the_registry_with_a_unit():
    metric = metrics.run_metric([90.0, 92.0], [10.0, 12.0], 1024**2, 0.9)
    report = metrics.storage_report({"model": "unet3d", metrics.NUM_ACCELERATORS: "1"}, {"run1": (10.0, 10.0)})
    written = set(metric) | set(report["overall"]) - {"model"} | set(report["runs"]["run1"]) - {"model"}
    assert written <= set(metrics.UNITS) and all(metrics.UNITS.values())
    assert len(set(metrics.UNITS)) == 14      # the 14 strings once spelt out across the code
