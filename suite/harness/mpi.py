"""mpiexec: its argv from plain values, starting it (in a memory cgroup when given) with its
output relayed, stopping its ranks on a signal, and one line saying why a rank died.

The ranks of every storage kind (suite.storage.run.rank, suite.storage.checkpoint.rank) write
ranks/rank-<r>.pid (host and pid) and errors/rank-<r>.txt in their run dir: stop() and
rank_failure() read those. The DLIO engine passes its own log, relay, environment and cwd.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

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
    argv = [str(exe), "-n", str(ranks)]
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
    relay = threading.Thread(target=relay or _relay, args=(proc.stdout, log), daemon=True)
    relay.start()
    try:
        rc = proc.wait()
    except Interrupted:
        stop(proc, run_dir)
        raise
    finally:
        relay.join(timeout=10)
        log.close()
    return rc


def _relay(stream, log) -> None:
    """Ranks' stdout to ours; mpiexec's own banners (a rank's bad termination) to mpiexec.log."""
    for raw in iter(stream.readline, b""):
        if raw.startswith((b"=", b"YOUR APPLICATION", b"This typically refers", b"Please see the FAQ")) \
                or b"TERMINATION" in raw:
            log.write(raw)
            log.flush()
            continue
        sys.stdout.write(raw.decode("utf-8", "replace"))
        sys.stdout.flush()
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
    """One line: what failed and where, from the ranks' error files or mpiexec's report."""
    errs = sorted((run_dir / "errors").glob("rank-*.txt"))
    if errs:
        first = errs[0]
        return f"{first.stem}: {first.read_text().strip().splitlines()[0]}"
    text = (run_dir / "mpiexec.log").read_text(errors="replace") if (run_dir / "mpiexec.log").exists() else ""
    pid = re.search(r"PID (\d+) RUNNING AT (\S+)", text)
    code = re.search(r"EXIT CODE: (\d+)", text)
    places = {v: k for k, v in rank_places(run_dir).items()}
    if pid:
        rank = places.get((pid.group(2), int(pid.group(1))))
        if rank is None:    # mpiexec names the host as given to it; the rank wrote its own hostname
            rank = next((r for (h, p), r in places.items() if p == int(pid.group(1))), None)
        who = f"rank {rank}" if rank is not None else "a rank"
        how = f"exit code {code.group(1)}" if code else "abnormal exit"
        if code and int(code.group(1)) in (9, 15, 6, 11):
            how += f" ({signal.Signals(int(code.group(1))).name})"
        return f"{who} (pid {pid.group(1)} on {pid.group(2)}) died: {how}; see {run_dir / 'mpiexec.log'}"
    how = f"exit code {rc}" + (f" ({signal.Signals(rc).name})" if rc in (6, 9, 11, 15) else "")
    return f"a rank or mpiexec died: {how}; see {run_dir / 'mpiexec.log'}"
