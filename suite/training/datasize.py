"""How big the dataset must be: the MLPerf Storage dataset-size rules, per ruleset.

The constants are the ruleset's (rules/<ruleset>/ruleset.yaml `datasize`: min_steps S, memory_multiple
k, formula; suite.rules.rulesets):
formula samples (v0.5, v1.0): min_samples = max(steps x batch x N, H x memory_bytes x k // record_length)
              steps = total_training_steps if the workload sets it, else S (100 in v0.5, 500 in v1.0)
              files = min_samples // samples_per_file
formula files (v2.0): files = max(k x H x memory_bytes // (samples_per_file x record_length),
                          S x N x batch // samples_per_file)
Integer (floor) arithmetic throughout, as the reference implementations do.
The same function serves `suite datasize`, the runner's closed-division refusal and the checker.
"""

from dataclasses import asdict, dataclass

from suite.errors import SuiteError
from suite.rules import rulesets


@dataclass(frozen=True)
class Datasize:
    ruleset: str
    workload: str
    accelerator: str
    num_accelerators: int
    client_hosts: int
    host_memory_bytes: int           # per host
    num_files: int
    num_samples: int
    total_bytes: float
    steps_rule_samples: int          # samples the minimum-steps rule demands
    memory_rule_samples: int         # samples the 5x-memory rule demands
    dictated_by: str                 # "steps" or "memory"
    steps: int
    steps_per_epoch: int
    epoch_time_at_full_au_s: float

    def to_dict(self) -> dict:
        return asdict(self)


def default_ruleset(workload) -> str:
    """The default ruleset (rulesets.default(), v3.0) when the workload has it; else the base round
    (v1.0, what a run without --ruleset was before v3.0) when it has that; else its newest."""
    for name in (rulesets.default().name, rulesets.base().name):
        if name in workload.rulesets:
            return name
    return workload.rulesets[-1]


def compute(workload, num_accelerators: int, client_hosts: int, host_memory_bytes: int,
            ruleset: str | None = None) -> Datasize:
    ruleset = ruleset or default_ruleset(workload)
    known = rulesets.names()
    if ruleset not in known:
        raise SuiteError(f"ruleset: expected one of {', '.join(known)}, got {ruleset!r}")
    if ruleset not in workload.rulesets:
        raise SuiteError(f"workload {workload.name} on {workload.accelerator}: ruleset: expected one of "
                         f"{', '.join(workload.rulesets)}, got {ruleset}")
    for label, value in (("accelerators", num_accelerators), ("client hosts", client_hosts),
                         ("host memory", host_memory_bytes)):
        if int(value) <= 0:
            raise SuiteError(f"{label}: expected a positive number, got {value}")
    n, hosts, mem = int(num_accelerators), int(client_hosts), int(host_memory_bytes)
    batch, spf, rec = workload.batch_size, workload.num_samples_per_file, workload.record_length_bytes
    size = rulesets.get(ruleset).datasize
    steps = workload.total_training_steps or size.min_steps
    total_memory = hosts * mem * size.memory_multiple
    if size.formula == "files":
        memory_files = int(total_memory // (spf * rec))
        steps_files = (size.min_steps * n * batch) // spf
        files = max(memory_files, steps_files)
        memory_samples, steps_samples = memory_files * spf, steps_files * spf
        dictated = "memory" if memory_files >= steps_files else "steps"
    else:
        steps_samples = steps * batch * n
        memory_samples = int(total_memory // rec)
        samples = max(steps_samples, memory_samples)
        files = samples // spf
        dictated = "memory" if memory_samples >= steps_samples else "steps"
    samples = files * spf
    steps_per_epoch = samples // (n * batch)
    return Datasize(
        ruleset=ruleset, workload=workload.name, accelerator=workload.accelerator,
        num_accelerators=n, client_hosts=hosts, host_memory_bytes=mem,
        num_files=files, num_samples=samples, total_bytes=samples * rec,
        steps_rule_samples=steps_samples, memory_rule_samples=memory_samples, dictated_by=dictated,
        steps=steps, steps_per_epoch=steps_per_epoch,
        epoch_time_at_full_au_s=steps_per_epoch * workload.computation_time_s,
    )


def steps_part(workload, num_accelerators: int, ruleset: str | None = None) -> int:
    """Files the minimum-steps part of the rule alone demands (host memory unknown): the full
    rule with one byte of host memory, whose memory part is then zero files."""
    ds = compute(workload, num_accelerators, 1, 1, ruleset)
    return ds.steps_rule_samples // workload.num_samples_per_file
