import time

import pytest

from suite.storage.run.accelerator import ComputeModel, expected_au_percentage, precise_sleep


def test_steps_per_epoch_is_dlio_max_steps():
    m = ComputeModel(0.323, batch_size=7, num_ranks=2)
    assert m.steps_per_epoch(100) == 7            # floor(100 / 14)
    assert m.steps_per_epoch(100, total_training_steps=3) == 3
    assert m.samples_per_rank(100) == 49


def test_compute_sleeps_about_the_computation_time():
    m = ComputeModel(0.02, 1, 1)
    took = m.compute()
    assert took >= 0.02
    assert ComputeModel(0.0, 1, 1).compute() < 0.01


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
