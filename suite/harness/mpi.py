"""mpiexec: its argv from plain values, starting it (in a memory cgroup when given) with its
output relayed, stopping its ranks on a signal, and one line saying why a rank died.

The ranks of every storage kind (suite.training.run.rank, suite.checkpointing.rank) write
ranks/rank-<r>.pid (host and pid) and errors/rank-<r>.txt in their run dir: stop() and
rank_failure() read those. The DLIO engine passes its own log, relay, environment and cwd.
"""

import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from suite import files
from suite.errors import RunError, SuiteError

ROOT = Path(__file__).resolve().parent.parent.parent     # the directory holding the `suite` package


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached the CLI while runs were under way (raised by enforced.signals_interrupt)."""

    def __init__(self, signame: str):
        super().__init__(signame)
        self.signame = signame


def mpiexec_argv(ranks: int, *, hosts: list | None = None, hostfile: str | None = None,
                 host_args: list | None = None, exe: str | Path | None = None) -> list[str]:
    """`mpiexec -n RANKS` and where the ranks go: `host_args` as they are (the launcher's options and
    -hosts of ranks we place), else `-f HOSTFILE`, else `-hosts a,b` (none: this host). `exe`: an
    mpiexec of one's own (the DLIO engine's venv), else the mpich wheel's beside python, else PATH's."""
    if exe is None:
        beside = Path(sys.executable).parent / "mpiexec"
        exe = str(beside) if beside.exists() else shutil.which("mpiexec")
        if not exe:
            raise SuiteError("mpiexec: expected the mpich wheel's mpiexec beside python, got none (pip install mpich)")
    argv = [str(exe), "-print-all-exitcodes", "-n", str(ranks)]     # the codes: rank_failure()
    if host_args is not None:
        return argv + list(host_args)
    if hostfile:
        return argv + ["-f", str(hostfile)]
    if hosts:
        return argv + ["-hosts", ",".join(hosts)]
    return argv


def python_module(module: str, *args) -> list[str]:
    """`python -m MODULE ARGS` with this interpreter: what mpiexec starts for our own ranks."""
    return [sys.executable, "-m", module, *map(str, args)]


def rank_environment() -> dict:
    """Our environment, with this `suite` package importable by the ranks whatever their
    working directory (also when suite runs from a checkout that is not installed)."""
    env = dict(os.environ)
    if ROOT.name in ("site-packages", "dist-packages"):    # installed: importable already, and never before the stdlib
        return env
    here = str(ROOT)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([here, *[p for p in paths if p != here]])
    return env


def launch(argv, run_dir: Path, start_in_cgroup, *, log_name: str = "mpiexec.log", relay=None, env=None,
           cwd=None, merge_stderr: bool = False) -> int:
    """Start mpiexec (in the cgroup when given), relay its stdout, wait; on SIGINT/SIGTERM
    stop the ranks (mpiexec forwards the signal; stragglers are killed by pid). The DLIO engine
    passes its own log name, relay, environment and working directory, stderr merged into stdout."""
    log = open(run_dir / log_name, "wb")
    kwargs = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else log,
                  stdin=subprocess.DEVNULL, start_new_session=True, env=env or rank_environment(),
                  cwd=None if cwd is None else str(cwd))
    try:
        proc = start_in_cgroup(argv, **kwargs) if start_in_cgroup else subprocess.Popen(argv, **kwargs)
    except OSError as exc:
        log.close()
        raise RunError(f"{argv[0]}: cannot start: {exc.strerror}") from None
    quiet = Quiet(proc.stdout, log)        # the launcher's own lines: to the log, never to the terminal
    relay = threading.Thread(target=relay or _relay, args=(quiet, log), daemon=True)
    relay.start()
    watch = DeathWatch(run_dir)
    watch.start()
    segments = _shm_segments()
    try:
        rc = proc.wait()
    except Interrupted:
        stop(proc, run_dir)
        raise
    finally:
        watch.finish(write=proc.returncode not in (None, 0))
        relay.join(timeout=10)
        log.close()
        if proc.returncode != 0:
            remove_orphan_segments(segments, ours=watch.segments)
    if rc != 0:                 # a failed launch (not an interrupted one): what mpiexec said, trimmed
        for line in quiet.said():
            print(line, flush=True)
    return rc


SHM = Path("/dev/shm")


def _shm_segments() -> set[str]:
    try:
        return {n for n in os.listdir(SHM) if n.startswith("mpich_shm_")}
    except OSError:
        return set()


def remove_orphan_segments(before: set[str], settle_s: float = 0.2, ours: set[str] | None = None) -> list[str]:
    """MPICH's shared-memory segments (/dev/shm/mpich_shm_*, ~2 MiB each) outlive ranks that were
    killed: remove those that appeared during this run and that no process maps, twice looked at
    settle_s apart (a segment another run is making now is mapped within that); with `ours` (the
    segments this run's ranks were seen to map: DeathWatch) only those, so another job's orphan that
    appeared meanwhile is its own to clear. Returns their names."""
    new = _shm_segments() - before
    orphans = _unmapped(new & ours if ours else new)
    if orphans:
        time.sleep(settle_s)
        orphans = _unmapped(orphans)
    gone = []
    for name in sorted(orphans):
        try:
            (SHM / name).unlink()
            gone.append(name)
        except OSError:
            pass
    return gone


def _unmapped(names: set[str]) -> set[str]:
    if not names:
        return set()
    mapped = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            text = maps.read_text()
        except OSError:
            continue
        mapped |= {n for n in names if n in text}
    return names - mapped


class DeathWatch(threading.Thread):
    """The order in which this host's ranks exited, and how, while mpiexec runs: mpiexec SIGKILLs
    the other ranks as soon as one dies and then names whichever it likes (rank 0, mostly), so the
    first to go is learnt here, from a pidfd per rank (ranks/rank-<r>.pid) that turns readable when
    the rank exits, in an epoll set (whose ready list keeps the order, also of two deaths that happen
    between two looks); its exit status is read from /proc while it is a zombie, when that is in time.
    finish() writes ranks/exits.txt ("<rank> <status or ?>" a line, first first) for rank_failure()."""

    def __init__(self, run_dir: Path):
        super().__init__(daemon=True)
        self.run_dir = run_dir
        self.exits: list[tuple[int, str]] = []
        self.segments: set[str] = set()      # MPICH segments this host's ranks map (remove_orphan_segments)
        self._done = threading.Event()

    def run(self) -> None:
        poller, fds, seen = select.epoll(), {}, set()
        here = socket.gethostname()
        try:
            while not self._done.is_set():
                for r, pid in self._new_ranks(seen, here):
                    try:
                        fd = os.pidfd_open(pid)
                    except ProcessLookupError:   # reaped before this thread looked (it was starved on a busy
                        self.exits.append((r, "?"))   # host): it died before any rank still to be seen dying
                        continue
                    except OSError:          # no pidfds here: the order is unknown
                        continue
                    fds[fd] = (r, pid)
                    poller.register(fd, select.EPOLLIN)
                    self.segments |= _mapped_segments(pid)
                for fd, _ in poller.poll(0.02):     # epoll: the ready list is in the order they turned ready
                    r, pid = fds.pop(fd)
                    self.exits.append((r, _zombie_status(pid)))
                    poller.unregister(fd)
                    os.close(fd)
        finally:
            for fd in fds:
                os.close(fd)
            poller.close()

    def _new_ranks(self, seen: set, here: str):
        try:
            names = os.listdir(self.run_dir / "ranks")
        except OSError:
            return
        for name in names:
            if name.startswith("rank-") and name.endswith(".pid") and name not in seen:
                try:
                    host, pid = (self.run_dir / "ranks" / name).read_text().split()
                    rank = int(name[5:-4])
                except (OSError, ValueError):
                    continue
                seen.add(name)
                if host == here:
                    yield rank, int(pid)

    def finish(self, write: bool) -> None:
        self._done.set()
        self.join(timeout=2)
        if write and self.exits and (self.run_dir / "ranks").is_dir():
            text = "".join(f"{r} {how}\n" for r, how in self.exits)
            files.write_atomic(self.run_dir / "ranks" / "exits.txt", text)


def _mapped_segments(pid: int) -> set[str]:
    """The /dev/shm/mpich_shm_* a rank maps (it wrote its pid file after MPI_Init, so they are mapped)."""
    try:
        return set(_SEGMENT.findall(Path(f"/proc/{pid}/maps").read_text()))
    except OSError:
        return set()


_SEGMENT = re.compile(r"/dev/shm/(mpich_shm_\S+)")


def _zombie_status(pid: int) -> str:
    """"signal N" / "exit N" of a rank that is a zombie still (field 52 of /proc/<pid>/stat), else "?"."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" or len(fields) < 50:
            return "?"
        status = int(fields[-1])
    except (OSError, ValueError):
        return "?"
    return f"signal {status & 0x7f}" if status & 0x7f else f"exit {status >> 8}"


# mpiexec's (MPICH Hydra's) own lines on its stdout: exit codes, banners of a bad termination, proxies
LAUNCHER_LINES = (b"=", b"[mpiexec@", b"[proxy:", b"[hydra", b"HYDRA", b"YOUR APPLICATION", b"This typically refers",
                  b"Please see the FAQ")
SHOWN_ON_FAILURE = 6            # of the launcher's lines, the last ones shown when the launch failed
BOILERPLATE = ("This typically refers", "Please see the FAQ", "CLEANING UP", "YOU CAN IGNORE")   # never shown
SHOWN_WIDTH = 100


# Hydra's per-host proxy line of bare numbers, "[suite-h2] 0,0" (its host's binding, on a multi-host
# launch): no rank writes a line of only a host tag and numbers (issue 47: it reached the terminal unsaid)
PROXY_NUMBERS = re.compile(rb"^\[[\w.-]+\] [\d,. ]*\r?\n?$")


def launcher_line(raw: bytes) -> bool:
    """A line mpiexec itself wrote (not a rank's): "[mpiexec@host] Exit codes: ...", HYDRA's, banners."""
    return (raw.startswith(LAUNCHER_LINES) or b"TERMINATION" in raw or b"HYDU_" in raw or b"HYD_" in raw
            or PROXY_NUMBERS.match(raw) is not None)


class Quiet:
    """mpiexec's stdout as a relay reads it (readline, close), its launcher lines taken out: written to
    the run's log (beside the launcher's stderr) and kept, shown only when the launch failed (said())."""

    def __init__(self, stream, log):
        self.stream, self.log, self.kept = stream, log, []

    def readline(self) -> bytes:
        while True:
            raw = self.stream.readline()
            if not raw or not launcher_line(raw):
                return raw
            self.log.write(raw)
            self.log.flush()
            self.kept.append(raw)

    def close(self) -> None:
        self.stream.close()

    def said(self) -> list[str]:
        """The launcher's last lines, of its stdout (kept) and its stderr (the log's last 64 KiB),
        banners and blank ones left out, each cut to SHOWN_WIDTH columns, under a line saying where
        all of it is."""
        name = getattr(self.log, "name", "its log")
        try:
            with open(name, "rb") as f:
                f.seek(max(0, os.path.getsize(name) - 65536))
                raws = [r for r in f.read().splitlines() if launcher_line(r)]
        except (OSError, TypeError):
            raws = self.kept
        lines = [r.decode("utf-8", "replace").strip().lstrip("= ") for r in raws]
        lines = [x for x in lines if x and not x.startswith(BOILERPLATE)]
        if not lines:
            return []
        shown = [x if len(x) <= SHOWN_WIDTH - 4 else x[:SHOWN_WIDTH - 7] + "..." for x in lines[-SHOWN_ON_FAILURE:]]
        return [f"mpiexec said ({len(lines)} line(s), all in {name}):", *(f"    {x}" for x in shown)]


def _relay(stream, log) -> None:
    """Ranks' stdout to ours, each line wrapped to the terminal's 100 columns as ours are (a rank's
    epoch line grows with its figures); the launcher's own lines never reach it (Quiet logs them)."""
    from suite.terminal import say

    for raw in iter(stream.readline, b""):
        say(raw.decode("utf-8", "replace").rstrip("\n"))      # a reader that left: the ranks' pipe is drained on
    stream.close()


def stop(proc, run_dir: Path) -> None:
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            proc.send_signal(sig)
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            break
    for pid in rank_pids(run_dir).values():      # ranks we started, if mpiexec left any behind
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def rank_pids(run_dir: Path) -> dict[int, int]:
    """{rank: pid} of the ranks that ran on this machine."""
    here = socket.gethostname()
    return {r: pid for r, (host, pid) in rank_places(run_dir).items() if host == here}


def rank_places(run_dir: Path) -> dict[int, tuple[str, int]]:
    """{rank: (host, pid)} from ranks/rank-<r>.pid (each rank writes its own)."""
    out = {}
    for p in (run_dir / "ranks").glob("rank-*.pid"):
        try:
            host, pid = p.read_text().split()
            out[int(p.stem.split("-")[1])] = (host, int(pid))
        except (OSError, ValueError):
            pass
    return out


def rank_failure(run_dir: Path, rc: int) -> str:
    """One line: what failed and where, from the ranks' error files, else the first rank that exited
    without finishing (ranks/exits.txt, ranks/rank-<r>.done), else mpiexec's report."""
    errs = sorted((run_dir / "errors").glob("rank-*.txt"))
    if errs:
        first = errs[0]
        return f"{first.stem}: {first.read_text().strip().splitlines()[0]}"
    log = run_dir / "mpiexec.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    pid = re.search(r"PID (\d+) RUNNING AT (\S+)", text)
    code = re.search(r"EXIT CODE: (\d+)", text)
    places = rank_places(run_dir)
    first = _first_dead(run_dir, text, len(places))
    if first is not None and first[0] in places:
        rank, how = first
        host, rpid = places[rank]
        if how == "?":
            how = "exit status unknown"
        else:
            number = int(how.split()[1])
            how = f"exit code {number}" if how.startswith("exit") else f"killed by {_signame(number)}"
        return f"rank {rank} (pid {rpid} on {host}) died first: {how}; see {log}"
    if pid:
        by_place = {v: k for k, v in places.items()}
        rank = by_place.get((pid.group(2), int(pid.group(1))))
        if rank is None:    # mpiexec names the host as given to it; the rank wrote its own hostname
            rank = next((r for (h, p), r in by_place.items() if p == int(pid.group(1))), None)
        who = f"rank {rank}" if rank is not None else "a rank"
        how = f"exit code {code.group(1)}" if code else "abnormal exit"
        if code and int(code.group(1)) in (9, 15, 6, 11):
            how += f" ({signal.Signals(int(code.group(1))).name})"
        return f"{who} (pid {pid.group(1)} on {pid.group(2)}) died: {how}; see {log}"
    how = f"exit code {rc}" + (f" ({signal.Signals(rc).name})" if rc in (6, 9, 11, 15) else "")
    return f"a rank or mpiexec died: {how}; see {log}"


def _first_dead(run_dir: Path, text: str, ranks: int) -> tuple[int, str] | None:
    """(rank, how) of the first rank in ranks/exits.txt that has no ranks/rank-<r>.done, its status
    from /proc or else mpiexec's list. A rank that left cleanly (exit 0) without finishing reacted
    to a peer's death (a killed rank's sockets close before its pidfd turns readable): the first
    that exited otherwise is the one named, when there is one."""
    try:
        lines = (run_dir / "ranks" / "exits.txt").read_text().splitlines()
    except OSError:
        return None
    dead = []
    for line in lines:
        rank, _, how = line.partition(" ")
        if rank.isdigit() and not (run_dir / "ranks" / f"rank-{rank}.done").exists():
            dead.append((int(rank), how if how != "?" else _reported_status(text, int(rank), ranks)))
    return next((d for d in dead if d[1] != "exit 0"), dead[0] if dead else None)


def _reported_status(text: str, rank: int, ranks: int) -> str:
    """"exit N" / "signal N" of RANK from mpiexec's -print-all-exitcodes line, when all ranks ran on
    one host (the list is per host, in its local order), else "?". mpiexec gives a signal's number as
    the code: 6, 9, 11 and 15 are read as SIGABRT, SIGKILL, SIGSEGV and SIGTERM, as a shell's 128+N."""
    found = re.search(r"Exit codes: \[[^\]]+\] ([\d,]+)\s*$", text, re.M)
    if not found:
        return "?"
    codes = found.group(1).split(",")
    if len(codes) != ranks or rank >= len(codes):
        return "?"
    code = int(codes[rank])
    if code in (6, 9, 11, 15) or code > 128:
        return f"signal {code % 128}"
    return f"exit {code}"


def _signame(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
