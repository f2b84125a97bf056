"""What long steps show a person: `suite datagen`'s progress and closing summary; the live line of any
long step (Live, Ticker: TPCx-AI's jobs)."""

import shutil
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


class Live:
    """The live line of a long step, for a person watching: on a TTY one line rewritten in place with
    \\r (at most every `tty_every_s`); elsewhere (a pipe, a log file) a plain line at most every
    `every_s`, so a log gets a heartbeat, not a flood. `say(line)` prints an ordinary line (the live
    line cleared first on a TTY); `show(text)` offers the live text; `close()` clears it. Thread-safe."""

    def __init__(self, stream=None, every_s: float = 15.0, tty_every_s: float = 1.0, tty: bool | None = None,
                 plain=None):
        import threading

        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty() if tty is None else tty
        self.every_s = tty_every_s if self.tty else every_s
        self.plain = plain                         # off a TTY: where plain lines go (default: the stream)
        self.last, self.shown = time.monotonic(), 0      # the first plain line only after every_s of silence
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            self._clear()
            from suite.terminal import fit

            if self.plain is not None and not self.tty:
                self.plain(fit(line))
            else:
                print(fit(line), file=self.stream, flush=True)
            self.last = time.monotonic()

    def show(self, text: str) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self.last < self.every_s:
                return
            self.last = now
            if not self.tty:          # a log's plain line: wrapped at 100 columns like every other
                from suite.terminal import fit
                (self.plain or (lambda t: print(t, file=self.stream, flush=True)))(fit(text))
                return
            width = shutil.get_terminal_size((100, 24)).columns - 1
            text = text[:width]
            self.stream.write("\r" + text + " " * max(self.shown - len(text), 0) + "\r" + text)
            self.stream.flush()
            self.shown = len(text)

    def close(self) -> None:
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0


class Ticker:
    """Calls `live.show(status())` every `period_s` in a daemon thread while in the `with` block (a
    step that waits on something prints nothing by itself); status() returns None for nothing to show."""

    def __init__(self, live: Live, status, period_s: float = 1.0):
        import threading

        self.live, self.status, self.period_s = live, status, period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="progress-ticker", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            text = self.status()
            if text:
                self.live.show(text)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)
        self.live.close()


def elapsed(seconds: float) -> str:
    """A duration as a person reads it: 42 s, 3 min 05 s, 1 h 02 min."""
    s = int(max(seconds, 0))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
