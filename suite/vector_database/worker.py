"""The query-phase program, run by an engine's own venv (`suite engine install diskann|milvus`):
    <venv>/bin/python worker.py PLAN.json
It imports nothing of `suite` (the engine venvs pin numpy < 2 and old setuptools; ours does not):
standard library, numpy and the engine's client only. It builds or loads the index, runs the query
phase with C client threads (a fixed count or a fixed duration), and writes what it measured into
the plan's out dir: result.json, latencies_ms.npy (float64, issue order), query_index.npy and ids.npy
(each issued query's query number and the ids it returned). The suite side (suite.vector_database.run)
computes recall, percentiles and I/O per query from these files.
"""

import json
import os
import sys
import threading
import time


def proc_io(pid="self") -> dict:
    """/proc/<pid>/io: read_bytes (what the block layer read for it), syscr, rchar."""
    try:
        with open(f"/proc/{pid}/io") as f:
            return {k: int(v) for k, v in (line.split(":") for line in f if ":" in line)}
    except OSError as exc:
        return {"error": str(exc)}


def snapshot(plan: dict, pid="self") -> dict:
    """The I/O counters now: the process's /proc/<pid>/io, and the text of each counter file the plan names
    (the index device's /sys/dev/block/<dev>/stat, the run's I/O cgroup's files); the suite side parses them."""
    texts = {}
    for name, path in (plan.get("counters") or {}).items():
        try:
            with open(path) as f:
                texts[name] = f.read()
        except OSError as exc:
            texts[name] = f"error: {exc}"
    return {"t_s": time.perf_counter(), "proc": proc_io(pid), "files": texts}


def phases(plan: dict, search, queries, pid="self") -> tuple:
    """The cold pass (after the harness's cache clear: the run's figures), then, where the plan asks, the warm
    pass (the same queries again at once): each between two snapshots of the I/O counters."""
    load = {**plan["load"], "k": plan["search"]["k"]}
    a = snapshot(plan, pid)
    cold = query_loop(search, queries, load)
    b = snapshot(plan, pid)
    out = {"cold": {"before": a, "after": b, "wall_s": cold["wall_s"], "issued": int(len(cold["latencies_ms"]))}}
    if plan.get("warm_pass"):
        warm = query_loop(search, queries, load)
        c = snapshot(plan, pid)
        out["warm"] = {"before": b, "after": c, "wall_s": warm["wall_s"], "issued": int(len(warm["latencies_ms"])),
                       "errors": warm["errors"][:5]}
    return cold, out


def query_loop(search, queries, load: dict) -> dict:
    """C threads issue queries (query i % nq) until the count is reached or the duration is over."""
    import numpy as np

    clients, mode = int(load["clients"]), load["mode"]
    total = int(load["query_count"]) if mode == "query_count" else None
    deadline_s = float(load["duration_s"]) if mode == "timed" else None
    lock, counter = threading.Lock(), [0]
    records: list[list] = [[] for _ in range(clients)]
    errors: list[str] = []
    start = time.perf_counter()

    def client(c: int) -> None:
        out = records[c]
        while True:
            with lock:
                n = counter[0]
                if (total is not None and n >= total) or (deadline_s is not None and time.perf_counter() - start >= deadline_s):
                    return
                counter[0] += 1
            q = n % len(queries)
            t0 = time.perf_counter()
            try:
                ids = search(queries[q])
            except Exception as exc:  # noqa: BLE001 - one failed query fails the run, said once
                errors.append(f"{type(exc).__name__}: {exc}")
                return
            out.append((n, q, (time.perf_counter() - t0) * 1000.0, ids))

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    flat = sorted((r for rs in records for r in rs), key=lambda r: r[0])
    k = int(load["k"])
    ids = np.full((len(flat), k), -1, dtype=np.int64)
    for i, r in enumerate(flat):
        got = list(r[3])[:k]
        ids[i, :len(got)] = got
    return {"wall_s": wall, "errors": errors, "latencies_ms": np.array([r[2] for r in flat], dtype=np.float64),
            "query_index": np.array([r[1] for r in flat], dtype=np.int64), "ids": ids}


def diskann(plan: dict) -> dict:
    import diskannpy
    import numpy as np
    from importlib.metadata import version

    metric = {"L2": "l2", "COSINE": "cosine", "IP": "mips"}[plan["metric"]]
    idx_dir, p = plan["index_dir"], plan["build_params"]
    out = {"engine": "diskann", "engine_version": f"diskannpy {version('diskannpy')}", "build": None}
    if plan["build"]:
        os.makedirs(idx_dir, exist_ok=True)
        t0 = time.time()
        n, d = plan["num_vectors"], plan["dimension"]
        search_gib = float(p.get("search_memory_gib") or max(0.001, n * min(d, 32) / 2**30))
        diskannpy.build_disk_index(
            data=os.path.join(plan["data_dir"], "vectors.fbin"), distance_metric=metric, index_directory=idx_dir,
            complexity=int(p["search_list_size"]), graph_degree=int(p["max_degree"]),
            search_memory_maximum=search_gib, build_memory_maximum=float(plan.get("build_memory_gib", 4)),
            num_threads=int(plan.get("threads", 2)), pq_disk_bytes=int(p.get("pq_disk_bytes", 0)),
            vector_dtype=np.float32)
        out["build"] = {"duration_s": time.time() - t0, "inserted_vectors": n, "search_memory_gib": search_gib}
    if not plan["query"]:
        return out
    if plan.get("client_processes"):
        loop, io = client_processes(plan)
        out.update(io_query=_delta(io["cold"]["before"]["proc"], io["cold"]["after"]["proc"]),
                   io_source="/proc/<pid>/io of each client process, summed", clients="processes")
    else:
        queries = queries_of(plan)
        before_load = snapshot(plan)
        search = diskann_search(plan, max(2, int(plan["load"]["clients"])))
        loaded = snapshot(plan)
        loop, io = phases(plan, search, queries)
        io["load"] = {"before": before_load, "after": loaded}
        out.update(io_query=_delta(io["cold"]["before"]["proc"], io["cold"]["after"]["proc"]),
                   io_source="/proc/self/io", clients="threads")
    out.update(io_phases=io,
               engine_io=None, engine_io_note="diskannpy 0.7.0 exposes no per-query I/O count (the C++ "
               "search_disk_index prints mean IOs per query; its Python binding returns ids and distances only)")
    return {**out, "loop": loop}


def queries_of(plan: dict):
    import numpy as np

    return np.ascontiguousarray(load_fbin(os.path.join(plan["data_dir"], "queries.fbin")))   # in RAM: no faults per query


def diskann_search(plan: dict, contexts: int):
    """The disk index opened (`contexts` search contexts: 1 hangs on load in 0.7.0, so at least 2) and its
    one-query search; DRAM for the index is its node cache (plan cache_nodes, suite.vector_database.dram)."""
    import diskannpy
    import numpy as np

    metric = {"L2": "l2", "COSINE": "cosine", "IP": "mips"}[plan["metric"]]
    s = plan["search"]
    index = diskannpy.StaticDiskIndex(plan["index_dir"], num_threads=contexts,
                                      num_nodes_to_cache=int(plan.get("cache_nodes") or 0),
                                      cache_mechanism=1 if plan.get("cache_nodes") else 0, distance_metric=metric,
                                      vector_dtype=np.float32, dimensions=int(plan["dimension"]))
    k, sl, beam = int(s["k"]), int(s["search_list"]), int(s.get("beam_width", 2))
    return lambda q: index.search(q, k, sl, beam).identifiers


PROTO = "@@suite "      # the client's protocol lines on its stdout (the engine's own prints pass by)


def cpu_state() -> dict:
    """This process's CPU seconds (user, sys: all its threads) and its main thread's time on a CPU and waiting
    on the run queue (/proc/thread-self/schedstat, ns); a pass's wall time less these two is time asleep (I/O)."""
    t = os.times()
    try:
        with open("/proc/thread-self/schedstat") as f:
            run_ns, queue_ns = (int(x) for x in f.read().split()[:2])
    except (OSError, ValueError):
        run_ns = queue_ns = -1
    return {"user_s": t.user, "sys_s": t.system, "run_s": run_ns / 1e9, "runqueue_s": queue_ns / 1e9,
            "t_s": time.perf_counter()}


def cpu_delta(a: dict, b: dict) -> dict:
    """One client's pass: its own seconds (pass_s: from the moment it began, which a busy host delays past the
    common start, to its last query), CPU user/sys seconds, and of pass_s the seconds on a CPU, on the run
    queue, and asleep (waiting for its reads)."""
    out = {k: b[k] - a[k] for k in ("user_s", "sys_s", "run_s", "runqueue_s")}
    pass_s = b["t_s"] - a["t_s"]
    if a["run_s"] < 0:
        return {"pass_s": pass_s, "user_s": out["user_s"], "sys_s": out["sys_s"]}
    return {"pass_s": pass_s, **out, "asleep_s": max(0.0, pass_s - out["run_s"] - out["runqueue_s"])}


def _say(*words) -> None:
    sys.stdout.write("\n" + PROTO + " ".join(str(w) for w in words) + "\n")
    sys.stdout.flush()


def _hear(proc) -> list:
    """The next protocol line of a client process (its other output skipped); [] when it ended."""
    for line in proc.stdout:
        if PROTO in line:
            return line.split(PROTO, 1)[1].split()
    return []


def client_main(plan_path: str, i: int, nproc: int) -> int:
    """One client process (diskannpy's search holds the GIL, so threads of one process run one query at a
    time): open the index, say ready, then per `go <pass> <start>` issue queries i, i+P, ... (query n % nq)
    until the count or the duration is reached, save them, say done with this process's bytes read."""
    import numpy as np

    with open(plan_path) as f:
        plan = json.load(f)
    queries = queries_of(plan)
    before = proc_io()
    search = diskann_search(plan, 2)
    _say("ready", proc_io().get("read_bytes", 0) - before.get("read_bytes", 0))
    load, k = plan["load"], int(plan["search"]["k"])
    total = int(load["query_count"]) if load["mode"] == "query_count" else None
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] != "go":
            return 0
        name, start = cmd[1], float(cmd[2])
        deadline = start + float(load["duration_s"]) if load["mode"] == "timed" else None
        while time.perf_counter() < start:
            time.sleep(0.0005)
        rb, recs, errors, cpu0 = proc_io().get("read_bytes", 0), [], [], cpu_state()
        n = i
        while (total is None or n < total) and (deadline is None or time.perf_counter() < deadline):
            t0 = time.perf_counter()
            try:
                got = list(search(queries[n % len(queries)]))[:k]
            except Exception as exc:  # noqa: BLE001 - one failed query fails the run, said once
                errors.append(f"{type(exc).__name__}: {exc}")
                break
            recs.append((n, n % len(queries), (time.perf_counter() - t0) * 1000.0, got + [-1] * (k - len(got))))
            n += nproc
        np.savez(os.path.join(plan["out_dir"], f"client-{i}-{name}.npz"), n=np.array([r[0] for r in recs], dtype=np.int64),
                 q=np.array([r[1] for r in recs], dtype=np.int64), lat=np.array([r[2] for r in recs], dtype=np.float64),
                 ids=np.array([r[3] for r in recs], dtype=np.int64).reshape(len(recs), k))
        cpu = cpu_delta(cpu0, cpu_state())
        _say("done", proc_io().get("read_bytes", 0) - rb, time.perf_counter(), len(errors), json.dumps(cpu).replace(" ", ""))
        if errors:
            sys.stderr.write(errors[0] + "\n")
    return 0


def client_processes(plan: dict) -> tuple:
    """C client processes (worker.py --client), each with the index open, started together per pass; their
    records merged in issue order. The I/O counters snapshotted around each pass, as phases() does."""
    import subprocess

    nproc = int(plan["load"]["clients"])
    a = snapshot(plan)
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--client", plan["plan_path"], str(i), str(nproc)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for i in range(nproc)]
    try:
        ready = [_hear(p) for p in procs]
        if any(not r or r[0] != "ready" for r in ready):
            raise SystemExit(f"diskann: a client process did not open the index ({ready})")
        io = {"load": {"before": {**a, "proc": {"read_bytes": 0}},
                       "after": {**snapshot(plan), "proc": {"read_bytes": sum(int(r[1]) for r in ready)}}}}
        loops = {}
        for name in ("cold", "warm") if plan.get("warm_pass") else ("cold",):
            before = snapshot(plan)
            start = time.perf_counter() + 0.05
            for p in procs:
                p.stdin.write(f"go {name} {start!r}\n")
                p.stdin.flush()
            done = [_hear(p) for p in procs]
            after = snapshot(plan)
            if any(not d or d[0] != "done" for d in done):
                raise SystemExit(f"diskann: a client process ended in the {name} pass ({done})")
            loops[name] = _merged(plan, name, nproc, start, max(float(d[2]) for d in done), sum(int(d[3]) for d in done))
            io[name] = {"before": {**before, "proc": {"read_bytes": 0}},
                        "after": {**after, "proc": {"read_bytes": sum(int(d[1]) for d in done)}},
                        "wall_s": loops[name]["wall_s"], "issued": int(len(loops[name]["latencies_ms"])),
                        "clients_cpu": _summed([json.loads(d[4]) for d in done if len(d) > 4])}
    finally:
        for p in procs:
            try:
                p.stdin.close()
            except OSError:
                pass
            p.wait()
    return loops["cold"], io


def _summed(parts: list) -> dict:
    """The client processes' CPU figures of one pass, summed (seconds; over the wall time: mean clients in that state)."""
    keys = set.intersection(*(set(p) for p in parts)) if parts else set()
    return {"processes": len(parts), **{k: sum(p[k] for p in parts) for k in sorted(keys)}}


def _merged(plan: dict, name: str, nproc: int, start: float, end: float, failed: int) -> dict:
    import numpy as np

    parts = [np.load(os.path.join(plan["out_dir"], f"client-{i}-{name}.npz")) for i in range(nproc)]
    n = np.concatenate([x["n"] for x in parts])
    order = np.argsort(n, kind="stable")
    k = int(plan["search"]["k"])
    for i in range(nproc):
        os.remove(os.path.join(plan["out_dir"], f"client-{i}-{name}.npz"))
    return {"wall_s": end - start, "errors": [f"{failed} client(s) stopped on a failed query"] if failed else [],
            "latencies_ms": np.concatenate([x["lat"] for x in parts])[order],
            "query_index": np.concatenate([x["q"] for x in parts])[order],
            "ids": np.concatenate([x["ids"].reshape(-1, k) for x in parts])[order]}


def milvus(plan: dict) -> dict:
    from importlib.metadata import version

    import numpy as np
    from pymilvus import Collection, connections, utility

    server, io_pid = None, None
    try:
        if plan.get("uri"):
            connections.connect(uri=plan["uri"])
            where = plan["uri"]
        else:
            from milvus import MilvusServer

            os.makedirs(plan["index_dir"], exist_ok=True)
            _milvus_binaries(plan["index_dir"])
            server = MilvusServer()
            server.set_base_dir(plan["index_dir"])
            t0 = time.time()
            server.start()
            io_pid = server.server_proc.pid
            connections.connect(host="127.0.0.1", port=server.listen_port)
            where = f"embedded milvus {version('milvus')} on 127.0.0.1:{server.listen_port} (started in {time.time() - t0:.1f} s)"
        out = {"engine": "milvus", "engine_version": f"milvus server {utility.get_server_version()}; pymilvus "
               f"{version('pymilvus')}", "server": where, "build": None}
        name, index = plan["collection"], plan["index"]
        metric = plan["metric"]
        if plan["build"]:
            out["build"] = _milvus_build(plan, name, index, metric)
        if not plan["query"]:
            return out
        pid = io_pid or "self"
        before_load = snapshot(plan, pid)
        coll = Collection(name)
        coll.load()
        queries = np.ascontiguousarray(load_fbin(os.path.join(plan["data_dir"], "queries.fbin")))   # in RAM: no page faults per query
        s = plan["search"]
        sp = {"metric_type": metric, "params": {"ef": int(s["ef"])} if index == "HNSW" else {"search_list": int(s["search_list"])}}
        loaded = snapshot(plan, pid)

        # "Eventually": the collection is static (flushed, indexed, loaded above); at the default "Bounded"
        # the first queries after the server's start waited ~20 s for its time tick, counted in the cold pass
        def search(q):
            return coll.search([q.tolist()], "vector", sp, limit=int(s["k"]), consistency_level="Eventually")[0].ids

        loop, io = phases(plan, search, queries, pid)
        io["load"] = {"before": before_load, "after": loaded}
        out.update(io_query=_delta(io["cold"]["before"]["proc"], io["cold"]["after"]["proc"]), io_phases=io,
                   io_source=f"/proc/{io_pid}/io (the milvus server)" if io_pid else "none (a remote server: --uri)",
                   engine_io=None, engine_io_note="Milvus 2.3.5 reports no per-query I/O count")
        return {**out, "loop": loop}
    finally:
        connections.disconnect("default")
        if server is not None:
            server.stop()


def _milvus_binaries(base_dir: str) -> None:
    """The embedded server's programs and libraries: the milvus package ships them lzma-compressed, and
    MilvusServer.start decompresses them into <base dir>/bin wherever that folder lacks them (seconds of
    CPU, and every index dir its own copy). Decompressed once per engine venv instead (<venv>/milvus-bin,
    under a lock: two runs may start at once), each base dir's bin/ a link to them. A base dir that has
    its bin/ already keeps it; where the venv cannot be written, the package's own way stays."""
    import fcntl

    link = os.path.join(base_dir, "bin")
    if os.path.lexists(link):
        return
    shared = os.path.join(sys.prefix, "milvus-bin")
    done = os.path.join(shared, ".complete")
    try:
        if not os.path.isfile(done):
            import milvus

            os.makedirs(shared, exist_ok=True)
            with open(os.path.join(shared, ".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not os.path.isfile(done):
                    milvus._initialize_data_files(shared)     # skips what its .md5 files say is there
                    with open(done, "w") as f:
                        f.write(milvus.__version__ + "\n")
        os.symlink(os.path.join(shared, "bin"), link)
    except OSError:
        pass


def _milvus_build(plan: dict, name: str, index: str, metric: str) -> dict:
    """The collection made anew, every vector inserted (ids 0..n-1), flushed, the index built. A build
    that does not finish in time is one line (embedded 2.3.5's DISKANN: bad_function_call, retried forever)."""
    import numpy as np
    from pymilvus import Collection, CollectionSchema, DataType, FieldSchema, utility

    if utility.has_collection(name):
        utility.drop_collection(name)
    t0 = time.time()
    fields = [FieldSchema("id", DataType.INT64, is_primary=True),
              FieldSchema("vector", DataType.FLOAT_VECTOR, dim=plan["dimension"])]
    coll = Collection(name, CollectionSchema(fields, description="suite vector_database"))
    vectors = load_fbin(os.path.join(plan["data_dir"], "vectors.fbin"))
    for s0 in range(0, len(vectors), 10000):
        block = np.asarray(vectors[s0:s0 + 10000])
        coll.insert([list(range(s0, s0 + len(block))), block])
    coll.flush()
    params = {"M": plan["build_params"]["M"], "efConstruction": plan["build_params"]["ef_construction"]} \
        if index == "HNSW" else {}
    coll.create_index("vector", {"index_type": index, "metric_type": metric, "params": params})
    limit_s = max(600.0, plan["num_vectors"] / 100)
    try:
        utility.wait_for_index_building_complete(name, timeout=limit_s)
    except Exception as exc:  # noqa: BLE001 - the server's own words, in one line
        raise SystemExit(f"milvus: the {index} index of {name} did not build within {limit_s:.0f} s "
                         f"({type(exc).__name__}: {str(exc)[:200]}); see the server's log") from None
    return {"duration_s": time.time() - t0, "inserted_vectors": coll.num_entities}


def load_fbin(path):
    import numpy as np

    with open(path, "rb") as f:
        n, d = np.frombuffer(f.read(8), dtype="<u4")
    return np.memmap(path, dtype="<f4", mode="r", offset=8, shape=(int(n), int(d)))


def _delta(a: dict, b: dict) -> dict:
    return {k: b[k] - a[k] for k in a if k in b and isinstance(a[k], int)}


def main(argv) -> int:
    import numpy as np

    if len(argv) == 5 and argv[1] == "--client":
        return client_main(argv[2], int(argv[3]), int(argv[4]))
    with open(argv[1]) as f:
        plan = json.load(f)
    plan["plan_path"] = os.path.abspath(argv[1])
    out_dir = plan["out_dir"]
    result = (diskann if plan["engine"] == "diskann" else milvus)(plan)
    loop = result.pop("loop", None)
    if loop is not None:
        for name in ("latencies_ms", "query_index", "ids"):
            np.save(os.path.join(out_dir, name + ".npy"), loop[name])
        result["query"] = {"wall_s": loop["wall_s"], "issued": int(len(loop["latencies_ms"])), "errors": loop["errors"][:5]}
    tmp = os.path.join(out_dir, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
    os.replace(tmp, os.path.join(out_dir, "result.json"))
    return 1 if loop is not None and loop["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
