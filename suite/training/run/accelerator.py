"""The simulated accelerator: how many steps an epoch has and how long each step computes.

No I/O and no MPI here: the runner asks this model what to do and times what happened.

DLIO's model (v1.0): an epoch has floor(samples / (batch x N)) steps per rank; each step
waits for its batch, "computes" for computation_time seconds (a sleep: the accelerator
does not use the host CPU), then all ranks meet at a barrier (the all-reduce of
synchronous data-parallel training).

A step counts computation_time as its compute, as DLIO counts it -- never the sleep as it ran: on
a loaded host a sleep overshoots, and counting the overshoot as compute made AU read high while
the storage fell behind. The Clock pays an overshoot back from the next step's sleep, as a real
accelerator's queue of launched work would not wait for a late host thread, so the compute
phases of an epoch take computation_time x steps of wall time and AU reads neither high nor low.
"""

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class ComputeModel:
    computation_time_s: float     # per step, as the workload (or --param) says
    batch_size: int               # samples per step per rank
    num_ranks: int                # simulated accelerators

    def __post_init__(self):
        if self.computation_time_s < 0:
            raise ValueError(f"computation_time_s: expected >= 0, got {self.computation_time_s}")
        if self.batch_size <= 0 or self.num_ranks <= 0:
            raise ValueError("batch_size and num_ranks must be positive")

    def steps_per_epoch(self, total_samples: int, total_training_steps: int | None = None) -> int:
        """Steps each rank takes per epoch: all ranks take the same number (DLIO's max_steps)."""
        steps = total_samples // (self.batch_size * self.num_ranks)
        if total_training_steps:
            steps = min(steps, int(total_training_steps))
        return steps

    def clock(self) -> "Clock":
        """A rank's compute clock (one per rank: it carries the overshoot from step to step)."""
        return Clock(self.computation_time_s)


class Clock:
    """One rank's simulated compute: each step sleeps computation_time less what earlier sleeps overshot."""

    def __init__(self, computation_time_s: float):
        self.computation_time_s = computation_time_s
        self.late_s = 0.0           # overshoot not yet paid back

    def compute(self) -> float:
        """Simulate one step of computation; return the wall seconds it took (it counts computation_time_s)."""
        t0 = time.perf_counter()
        target = self.computation_time_s - self.late_s
        if target > 0:
            precise_sleep(target)
        slept = time.perf_counter() - t0
        self.late_s = max(0.0, self.late_s + slept - self.computation_time_s)
        return slept


def precise_sleep(seconds: float) -> None:
    """Sleep `seconds` without burning the CPU other ranks need (the overshoot is ~0.1 ms)."""
    deadline = time.perf_counter() + seconds
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            return
        time.sleep(left)


def expected_au_percentage(computation_time_s: float, io_time_per_step_s: float, parallel_io: bool = True) -> float:
    """Analytic AU of a steady-state epoch (first step excluded, as DLIO does).

    With prefetching (parallel_io) a step takes max(compute, io); without, compute + io.
    """
    if computation_time_s <= 0:
        return 0.0
    step = max(computation_time_s, io_time_per_step_s) if parallel_io else computation_time_s + io_time_per_step_s
    return 100.0 * computation_time_s / step
