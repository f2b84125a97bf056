"""The per-host side of `suite run --hosts`: what the CLI runs on each host through the launcher
(ssh on a cluster, tools/netns-launcher on the namespace rig), one JSON line on stdout each.

    python -m suite.enforce.hostagent probe
        {hostname, mem_total_bytes, cpu_count, cgroup: {version, reason}, drop_caches_writable}
    python -m suite.enforce.hostagent drop
        the CacheDrop of `sync; echo 3 > /proc/sys/vm/drop_caches` on this host, + hostname
    python -m suite.enforce.hostagent cgroup-create NAME LIMIT_BYTES JOIN_DIR
        makes the memory cgroup NAME (limit read back), writes its join file's path to
        JOIN_DIR/<hostname> for `join`; prints the creation evidence (+ hostname)
    python -m suite.enforce.hostagent cgroup-close NAME
        kills what is left in NAME, records peak and OOM kills, removes it; prints the evidence
    python -m suite.enforce.hostagent visible PATH
        {hostname, seen: the first 200 bytes of the file PATH as text, or null, why: null or the
        reason}: whether a file the CLI wrote is visible here (a folder shared by every host)
    python -m suite.enforce.hostagent join JOIN_DIR ARGV...
        (how mpiexec starts a rank) this process joins the cgroup named in JOIN_DIR/<hostname>,
        then execs ARGV: the rank's whole memory is charged to its host's cgroup

A failure is a JSON line {"error": "..."} and exit 1 (join: a line on stderr, exit 126).
"""

import json
import os
import socket
import sys


def _emit(doc: dict) -> int:
    print(json.dumps(doc, sort_keys=True), flush=True)
    return 0 if "error" not in doc else 1


def probe() -> dict:
    from suite.enforce.cache import DROP_CACHES_PATH, meminfo_bytes
    from suite.enforce.detect import detect_cgroup

    support = detect_cgroup()
    return {"hostname": socket.gethostname(), "mem_total_bytes": meminfo_bytes("MemTotal"),
            "cpu_count": os.cpu_count(), "cgroup": {"version": support.version, "reason": support.reason},
            "drop_caches_writable": os.access(DROP_CACHES_PATH, os.W_OK)}


def drop() -> dict:
    from suite.enforce.cache import drop_caches

    return dict(drop_caches().to_dict(), hostname=socket.gethostname())


def cgroup_create(name: str, limit_bytes: int, join_dir: str) -> dict:
    from suite.enforce.cgroup import MemoryCgroup
    from suite.files import write_atomic

    cg = MemoryCgroup(limit_bytes, name)
    cg.create()
    join = cg.backend.join_file(cg.path)
    if join is None:       # systemd-run scopes wrap a command; a rank started by mpiexec cannot join one
        cg.close()
        return {"error": f"{cg.path}: a {cg.version} cgroup cannot be joined by a rank mpiexec starts "
                         f"(needs cgroup v1 or v2 with a writable hierarchy)", "hostname": socket.gethostname()}
    host = socket.gethostname()
    write_atomic(os.path.join(join_dir, host), join + "\n")
    return dict(cg.evidence(), hostname=host, join_file=join)


def cgroup_close(name: str) -> dict:
    from suite.enforce.cgroup import MemoryCgroup
    from suite.enforce.detect import backend_for, detect_cgroup

    backend = backend_for(detect_cgroup())
    cg = MemoryCgroup.adopt(name, backend)
    exists = backend.exists(cg.path)
    if exists:
        cg.close()
    return {"hostname": socket.gethostname(), "path": cg.path, "existed": exists,
            "removed": (cg.removed or not exists) and not backend.exists(cg.path),
            "peak_bytes": cg.peak_bytes(), "oom_kills": cg.oom_kills(), "killed_pids": cg.killed_pids,
            "remove_s": cg.remove_s, "cleanup_error": cg.cleanup_error}


def visible(path: str) -> dict:
    """The start of the file at `path` as this host sees it (None and why where it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return {"hostname": socket.gethostname(), "seen": f.read(200).decode("utf-8", "replace"), "why": None}
    except OSError as exc:
        return {"hostname": socket.gethostname(), "seen": None, "why": exc.strerror or str(exc)}


def join(join_dir: str, argv: list) -> None:
    """Join this host's cgroup, then exec argv (never returns)."""
    host = socket.gethostname()
    try:
        with open(os.path.join(join_dir, host), encoding="utf-8") as f:
            target = f.read().strip()
        fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)
        os.execv(argv[0], argv)
    except OSError as exc:
        print(f"hostagent join on {host}: {exc.filename or argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        os._exit(126)


def main(argv: list) -> int:
    if argv[:1] == ["join"] and len(argv) >= 3:
        join(argv[1], argv[2:])
    from suite.errors import SuiteError
    try:
        if argv == ["probe"]:
            return _emit(probe())
        if argv == ["drop"]:
            return _emit(drop())
        if argv[:1] == ["cgroup-create"] and len(argv) == 4:
            return _emit(cgroup_create(argv[1], int(argv[2]), argv[3]))
        if argv[:1] == ["visible"] and len(argv) == 2:
            return _emit(visible(argv[1]))
        if argv[:1] == ["cgroup-close"] and len(argv) == 2:
            return _emit(cgroup_close(argv[1]))
    except (SuiteError, OSError, ValueError) as exc:
        return _emit({"error": str(exc), "hostname": socket.gethostname()})
    return _emit({"error": f"usage: probe | drop | cgroup-create NAME LIMIT DIR | cgroup-close NAME | "
                           f"visible PATH | join DIR ARGV..., got {' '.join(argv)[:200]!r}"})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
