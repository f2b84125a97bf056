import time

import pytest

from suite.training.run.accelerator import ComputeModel, expected_au_percentage, precise_sleep


def test_steps_per_epoch_is_dlio_max_steps():
    m = ComputeModel(0.323, batch_size=7, num_ranks=2)
    assert m.steps_per_epoch(100) == 7            # floor(100 / 14)
    assert m.steps_per_epoch(100, total_training_steps=3) == 3


def test_compute_sleeps_about_the_computation_time():
    clock = ComputeModel(0.02, 1, 1).clock()
    took = clock.compute()
    assert took >= 0.02
    assert ComputeModel(0.0, 1, 1).clock().compute() < 0.01


def _spin(stop_at: float) -> None:
    while time.time() < stop_at:
        pass


def test_the_clock_pays_overshoot_back_so_compute_phases_total_the_computation_time():
    """300 steps of 2 ms beside 3 busy-looping processes (2 cores here): plain 2 ms sleeps overshoot
    (2.01-5.6 ms each, 4-7% over in total, idle or not), yet the clock's compute phases total 300 x 2 ms
    plus at most the last step's overshoot -- a starved host neither inflates the counted compute nor
    stretches the epoch, where the old runner counted each sleep as it ran."""
    import multiprocessing as mp
    steps, t = 300, 0.002
    ctx = mp.get_context("fork")
    hogs = [ctx.Process(target=_spin, args=(time.time() + 10,), daemon=True) for _ in range(3)]
    for h in hogs:
        h.start()
    try:
        clock = ComputeModel(t, 1, 1).clock()
        slept = [clock.compute() for _ in range(steps)]
        plain = []
        for _ in range(steps):
            t0 = time.perf_counter()
            precise_sleep(t)
            plain.append(time.perf_counter() - t0)
    finally:
        for h in hogs:
            h.terminate()
            h.join()
    assert sum(slept) <= steps * t + max(slept) + 1e-3, (sum(slept), max(slept))
    assert sum(slept) >= steps * t                      # never less than the work: late is paid, not skipped
    assert sum(plain) > sum(slept)                       # the overshoot the clock pays back
    assert clock.late_s < max(slept)


def test_precise_sleep_does_not_return_early():
    t0 = time.perf_counter()
    precise_sleep(0.015)
    assert time.perf_counter() - t0 >= 0.015


def test_expected_au():
    assert expected_au_percentage(0.2, 0.1) == 100.0
    assert expected_au_percentage(0.2, 0.4) == pytest.approx(50.0)
    assert expected_au_percentage(0.2, 0.05, parallel_io=False) == pytest.approx(80.0)
    assert expected_au_percentage(0.0, 0.1) == 0.0


def test_bad_model_values():
    with pytest.raises(ValueError):
        ComputeModel(-1, 1, 1)
    with pytest.raises(ValueError):
        ComputeModel(0.1, 0, 1)
