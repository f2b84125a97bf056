"""Rule enforcement for `suite run`: cache drops and memory cgroups, with evidence.

API (the runner codes against exactly this; import each name from its module:
suite.enforce.cache, .detect, .cgroup, .backends):

drop_caches() -> CacheDrop
    `sync`, then write "3" to /proc/sys/vm/drop_caches. Never raises for "not
    permitted": returns CacheDrop(attempted, succeeded, duration_s, method, error, at,
    sync_duration_s, cached_bytes_before, cached_bytes_after) -- frozen, `.to_dict()`.
    `error` (when not succeeded) is one line naming /proc/sys/vm/drop_caches and why.
    cached_bytes_* are /proc/meminfo "Cached" before the sync and after the drop.

page_cache_residency(path) -> (resident_bytes, size_bytes)
    How much of a file is in the page cache (mincore(2)); proof a drop worked per file.

detect_cgroup() -> CgroupSupport(version: "v2" | "v1" | "systemd" | None, root, reason)
    v2 (unified, memory in cgroup.controllers, subtree_control writable), then v1
    (a writable cgroup v1 memory hierarchy), then `systemd-run --scope` when systemd is
    PID 1. version None: `reason` lists why each was unusable.

MemoryCgroup(limit_bytes, name, support=None) -- a context manager
    Creates <root>/suite/<name> (v1: memory.limit_in_bytes and memory.memsw.limit_in_bytes
    if present; v2: memory.max, memory.swap.max=0; systemd: nothing until start) and reads
    the limit back into `.applied_bytes` (kernel rounds down to pages).
    .start(argv, **popen_kwargs) -> subprocess.Popen: the child joins the cgroup before it
        execs (pid written to cgroup.procs from a preexec hook; systemd: argv wrapped in
        `systemd-run --scope -p MemoryMax=`), so its descendants (mpiexec, ranks) inherit it.
    .peak_bytes()  v1 memory.max_usage_in_bytes, v2 memory.peak (None where absent)
    .usage_bytes() v1 memory.usage_in_bytes, v2 memory.current
    .oom_kills()   v1 memory.oom_control oom_kill, v2 memory.events oom_kill
    .evidence() -> {version, path, requested_bytes, applied_bytes, swap_limit_bytes,
        peak_bytes, oom_kills, removed, create_s, remove_s, killed_pids, cleanup_error}; valid after the block
        (final figures are read just before removal).
    On exit -- also after an exception or KeyboardInterrupt -- every process left in the
    cgroup is SIGKILLed, the cgroup removed (rmdir, retried briefly), evidence removed=True.
    If it cannot be removed: evidence cleanup_error, and CgroupCleanupError (a RunError)
    raised when the body itself did not raise. `.close()` does the same and is idempotent.

remove_stale(prefix, force=False) -> [paths]: empty and remove <root>/suite/<prefix>*
    cgroups left by a crashed run -- those whose owner pid (the first all-digit field of
    the name, as unique_name() makes it) is dead; force=True: every match.
unique_name(tag="run") -> "<tag>-<pid>-<n>"; preflight(limit_bytes) -> evidence dict:
    create, read back and remove a probe cgroup now (fail fast before generating data).

Errors: CgroupError (a SuiteError, exit 2), one line naming the path tried, the reason and
what to do ("run as root ..., or drop --memory-limit"): no usable cgroup, mkdir refused
(not root, read-only), the kernel refusing the limit, a limit below 1 MiB or above
MemTotal, a limit read back more than a page from the request.

Names: unique per run and carrying the owner pid: unique_name() or f"run-{os.getpid()}-{n}".
start() uses a preexec hook (os.open/os.write/os.close of the pid only) in the forked child.
"""
