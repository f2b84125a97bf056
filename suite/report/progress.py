"""What `suite datagen` shows a person: the progress while it writes and the closing summary."""

import sys
import time


class Progress:
    """A tqdm bar on a TTY, else a plain line every 5% or 10 s (stderr); call it as (files, bytes)."""

    def __init__(self, total_files: int, enabled: bool = True, stream=None):
        self.total, self.enabled, self.stream = total_files, enabled, stream or sys.stderr
        self.bar, self.t0, self.last, self.next_files = None, time.perf_counter(), 0.0, 0

    def __enter__(self):
        if self.enabled and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit="file", file=self.stream, desc="datagen", dynamic_ncols=True)
        return self

    def __call__(self, files: int, nbytes: int, written_bytes: int | None = None, kept: int = 0) -> None:
        """`files` and `nbytes` done so far; of them, `written_bytes` written by this run (None: all)
        and `kept` files kept complete from an earlier one. The rate is of what this run wrote:
        a resumed generation's kept files are no throughput."""
        if not self.enabled:
            return
        files = min(files, self.total)
        written = nbytes if written_bytes is None else written_bytes
        now = time.perf_counter()
        if self.bar is not None:
            self.bar.update(files - self.bar.n)
            self.bar.set_postfix_str(f"{nbytes / 2**30:.2f} GiB" + (f", {kept} kept" if kept else ""), refresh=False)
        elif (files >= self.next_files and now - self.last >= 1) or now - self.last >= 10 or files == self.total:
            rate = written / max(now - self.t0, 1e-9) / 1e6
            shown = f" ({kept} kept)" if kept else ""
            print(f"datagen: {files}/{self.total} files{shown}, {nbytes / 2**30:.2f} GiB, {rate:.0f} MB/s written",
                  file=self.stream, flush=True)
            self.last, self.next_files = now, files + max(1, self.total // 20)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()


def summary(log: dict, log_path) -> str:
    kept = f" ({log['files_kept']} complete files kept)" if log["files_kept"] else ""
    return (f"datagen: {log['workload']} {log['format']}: wrote {log['files_written']} of {log['num_files']} files"
            f"{kept}, {log['bytes_written'] / 2**30:.2f} GiB in {log['duration_s']:.1f} s, "
            f"{log['throughput_mb_s']:.1f} MB/s (1 MB = 10^6 B), {log['processes']} process(es) x "
            f"{log['ranks']} rank(s); dataset {log['bytes'] / 2**30:.2f} GiB; log {log_path}")
