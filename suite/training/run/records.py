"""Typed records the runner passes between processes and writes to disk.

- RunPlan: what the CLI hands every rank (one JSON file per run, read by each rank);
- RankEpoch / RankSteps: one rank's per-step timings, written to steps/rank-<r>.json
  (seconds relative to the run start, which rank 0 broadcasts);
Serialised with sorted keys; units in the key names.
"""

from dataclasses import asdict, dataclass, field

STEPS_SCHEMA_VERSION = 1
PLAN_MAX_BYTES = 256 * 1024**2      # a plan lists every file: ~100 B each, so millions of files


@dataclass
class RunPlan:
    run_dir: str
    workload: str
    accelerator: str
    num_accelerators: int
    epochs: int
    steps_per_epoch: int
    batch_size: int
    computation_time_s: float
    samples_per_file: int
    record_length_bytes: float
    format: str
    read_threads: int
    prefetch_size: int
    transfer_size_bytes: int
    odirect: bool
    seed: int
    file_shuffle: bool
    sample_shuffle: bool
    files: list            # [[path, size_bytes], ...] in dataset order
    checkpoint_bytes: int = 0
    checkpoint_dir: str | None = None
    delay_per_file_s: float = 0.0
    storage_type: str = "local_fs"  # the rank's storage backend: backend_for(storage_type, "") reads `files`
    stop_when_clear: dict | None = None  # suite sweep's probes: {threshold_percentage, level, min_epochs}: stop
    #                                      once the epochs' AU is clearly above or below (suite.stats.sequential_verdict)
    parquet_columns: list | None = None  # format parquet: the columns read (suite.training.data.parquet_read)
    decode_delay_s: float = 0.0          # tests only: CPU burnt per row group decoded (a planted slow decode)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: dict) -> "RunPlan":
        plan = cls(**doc)
        plan.check_files()
        return plan

    def check_files(self) -> None:
        """Every item of `files` is [path, size_bytes >= 0] (what the schema leaves to us, for speed)."""
        for i, item in enumerate(self.files):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                    and isinstance(item[1], int) and not isinstance(item[1], bool) and item[1] >= 0):
                raise ValueError(f"plan: files[{i}]: expected [path, size_bytes], got {item!r}"[:300])


@dataclass
class RankEpoch:
    epoch: int
    step_start_s: list = field(default_factory=list)
    step_end_s: list = field(default_factory=list)
    step_compute_s: list = field(default_factory=list)    # counted: computation_time per step
    step_sleep_s: list = field(default_factory=list)      # the sleep's wall time (overshoot paid back next step)
    samples: int = 0
    bytes_read: int = 0
    files_read: int = 0
    start_s: float = 0.0
    end_s: float = 0.0
    # format parquet (suite.training.data.parquet_read), per step: what the reader threads did since the last step
    step_bytes_read: list = field(default_factory=list)
    step_requests: list = field(default_factory=list)
    step_io_s: list = field(default_factory=list)         # summed over the threads: time in storage reads
    step_decode_s: list = field(default_factory=list)     # summed over the threads: CPU time decoding
    columns_read: list = field(default_factory=list)      # the column names read (the same every step)

    @property
    def steps(self) -> int:
        return len(self.step_compute_s)


@dataclass
class RankSteps:
    rank: int
    hostname: str
    run_start_unix_s: float
    epochs: list = field(default_factory=list)         # [RankEpoch]
    checkpoint: dict | None = None                     # rank 0: {bytes_written, duration_s, path, start_s, end_s}
    peak_rss_bytes: int | None = None                  # the rank's own memory at its peak (VmHWM): None unknown
    storage_read_bytes: int | None = None              # what its reads fetched from storage (/proc/self/io read_bytes)

    def to_dict(self) -> dict:
        return {
            "peak_rss_bytes": self.peak_rss_bytes,
            "storage_read_bytes": self.storage_read_bytes,
            "schema_version": STEPS_SCHEMA_VERSION,
            "rank": self.rank,
            "hostname": self.hostname,
            "run_start_unix_s": self.run_start_unix_s,
            "epochs": [asdict(e) for e in self.epochs],
            "checkpoint": self.checkpoint,
        }

    @classmethod
    def from_dict(cls, doc: dict) -> "RankSteps":
        return cls(rank=doc["rank"], hostname=doc["hostname"], run_start_unix_s=doc["run_start_unix_s"],
                   epochs=[RankEpoch(**e) for e in doc["epochs"]], checkpoint=doc.get("checkpoint"),
                   peak_rss_bytes=doc.get("peak_rss_bytes"), storage_read_bytes=doc.get("storage_read_bytes"))
