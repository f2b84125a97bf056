"""`suite run --workload vdb-… --index diskann|hnsw`: the index built (or loaded) once, then N query
runs, each after the harness's cache clear (suite.harness.enforced: the one loop), each a v3.0 leaf.

The engine runs in its own venv (suite.engines.registry: diskann, milvus) as a subprocess,
`<venv>/bin/python suite/vector_database/worker.py PLAN.json`; what it measured comes back as files in the
leaf's vectordb/engine/ folder, and this side computes the figures (suite.vector_database.figures).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from suite import files, redact
from suite.errors import RunError, SuiteError
from suite.harness import enforced, hostfacts
from suite.vector_database import dataset
from suite.enforce import iocount
from suite.vector_database import dram
from suite.vector_database import evidence
from suite.vector_database import iofigures
from suite.vector_database import reference
from suite.vector_database import figures as results
from suite.vector_database import workload as workloads

WORKER = Path(__file__).with_name("worker.py")
MARKER = "suite-index.json"
ENGINE_FOR = {"DISKANN": "diskann", "HNSW": "milvus"}
ENGINE_INDEXES = {"diskann": ("DISKANN",), "milvus": ("HNSW", "DISKANN")}


@dataclass
class Options:
    workload: str
    index: str                       # DISKANN | HNSW
    engine: str | None               # diskann | milvus | None (the index's default)
    data_dir: str | None
    results_dir: str | None
    runs: int | None = None
    clients: int | None = None
    duration_s: float | None = None
    query_count: int | None = None
    uri: str | None = None
    beam_width: int | None = None    # DiskANN's beam width, else the workload's search.beam_width
    division: str = "closed"
    allow_no_cache_drop: bool = False
    no_cache_drop: bool = False
    overrides: dict = field(default_factory=dict)
    search_list: int | None = None   # a sweep point's (DiskANN) search list, else the workload's
    ef: int | None = None            # a sweep point's (Milvus HNSW) ef, else the workload's
    dram_percent: float | None = None   # the DRAM:index ratio the runs are held to (suite.vector_database.dram)
    sweep_point: bool = False        # a point of a ladder: a recall under the floor is recorded, not a failed run


class VdbRun:
    """The kind's side of the enforced loop: prepare (every refusal), started (the index), run_once."""

    def __init__(self, opts: Options):
        self.o = opts
        self.w = workloads.load(opts.workload)
        self.engine = opts.engine or ENGINE_FOR[opts.index]
        self.runs_done: list[dict] = []
        self.build: dict = {}
        self.leaves: dict[int, Path] = {}         # run k's leaf (its host_metrics.json goes there)
        self.search = {"k": self.w.k, "search_list": opts.search_list or self.w.search_list,
                       "beam_width": opts.beam_width or self.w.beam_width, "ef": opts.ef or self.w.ef}
        self.dram: dict | None = None

    # ---------------------------------------------------------------- prepare: refusals, nothing written
    def prepare(self) -> enforced.Series:
        from suite.engines import registry
        from suite.vector_database import engines

        o, w = self.o, self.w
        if o.index not in ENGINE_INDEXES[self.engine]:
            raise SuiteError(f"--index {o.index.lower()}: expected one of "
                             f"{', '.join(i.lower() for i in ENGINE_INDEXES[self.engine])} with --engine {self.engine}, got it")
        if self.engine == "milvus" and o.index == "DISKANN" and not o.uri:
            raise SuiteError("--index diskann --engine milvus: expected --uri of a Milvus server whose DISKANN builds, "
                             "got the embedded Milvus 2.3.5, whose DISKANN build fails with bad_function_call "
                             "(docs/vector-database.md); use --engine diskann")
        if o.uri and self.engine != "milvus":
            raise SuiteError(f"--uri: expected only with --engine milvus, got --engine {self.engine}")
        w.index_params(o.index)
        self.data_dir = Path(o.data_dir) if o.data_dir else workloads.default_data_dir(w.name)
        if not o.data_dir and w.name == "vdb-mini" and not (self.data_dir / dataset.META).is_file():
            dataset.generate(w, self.data_dir)          # the miniature is made on first use
        self.meta = dataset.verify(w, self.data_dir)
        self.eng, self.venv = registry.require(engines.named(self.engine))
        self.index_dir = self.data_dir / "index" / f"{self.engine}-{o.index}"
        self.reuse = self._index_state()
        clear = None if o.no_cache_drop else enforced.drop_page_cache
        if o.no_cache_drop and o.division == "closed":
            raise SuiteError("--no-cache-drop: expected only with --division open, got --division closed")
        if clear is not None:
            enforced.refuse_without_clear(clear, o.division, o.allow_no_cache_drop)
        return enforced.Series(name=f"{w.name}-{o.index.lower()}", results_dir=o.results_dir,
                               runs=o.runs or w.runs, clear_cache=clear, write_run_set=self.write_run_set,
                               started=self.started, host_metrics_dir=lambda k: self.leaves.get(k))

    def _index_state(self) -> bool:
        """True: a complete index of this dataset is there to load. An index made from other data (or
        other build parameters) is refused: one line naming its marker."""
        marker = self.index_dir / MARKER
        if self.o.uri or not marker.is_file():
            return False
        doc = files.load_json(marker)
        want = self._identity()
        for key, value in want.items():
            if not isinstance(doc, dict) or doc.get(key) != value:
                got = doc.get(key) if isinstance(doc, dict) else None
                raise SuiteError(f"{marker}: {key}: expected {value!r} (the index of {self.data_dir}), got {got!r}: "
                                 f"an index built for other data; remove {self.index_dir} to rebuild it")
        return True

    def _identity(self) -> dict:
        return {"vectors_sha256": self.meta["sha256"][dataset.VECTORS], "num_vectors": self.w.num_vectors,
                "dimension": self.w.dimension, "metric": self.w.metric, "index_type": self.o.index,
                "engine": self.engine, "build_params": self.w.index_params(self.o.index)}

    # ---------------------------------------------------------------- the index (datagen leaf)
    def started(self, results_dir: Path) -> None:
        self.results_dir = Path(results_dir)
        leaf, ts = results.leaf(self.results_dir, self.engine, self.o.index, "datagen")
        if self.reuse:
            self.build = {**files.load_json(self.index_dir / MARKER).get("build", {}), "reused": True}
            engine_version = files.load_json(self.index_dir / MARKER).get("engine_version", "?")
            enforced.say(f"index: {self.index_dir} (built earlier, reused)")
        else:
            enforced.say(f"index: building {self.o.index} with {self.engine} in {self.index_dir}")
            out = self._worker(leaf, build=True, query=False)
            self.build, engine_version = {**out["build"], "reused": False}, out["engine_version"]
            if not self.o.uri:
                files.write_atomic(self.index_dir / MARKER, files.dump_json(
                    {**self._identity(), "build": out["build"], "engine_version": engine_version}, indent=2))
            enforced.say(f"index: built in {out['build']['duration_s']:.1f} s")
        self.engine_version = engine_version
        results.metadata(leaf, ts, self.engine, self.o.index, "datagen", self.w, {"index_dir": str(self.index_dir)})
        results.summary(leaf, {**self._base("datagen"), "inserted_vectors": int(self.build.get("inserted_vectors") or 0),
                               "build": self.build, "status": "complete"})

    def _base(self, phase: str) -> dict:
        return {"schema_version": 1, "num_vectors": self.w.num_vectors, "dimension": self.w.dimension,
                "index_type": self.o.index, "database": {"database": self.engine}, "engine": self.engine,
                "engine_version": self.engine_version, "workload": self.w.name, "phase": phase,
                "metric_type": self.w.metric, "data_dir": str(self.data_dir), "index_dir": str(self.index_dir),
                "division": self.o.division, "miniature": not self.o.data_dir and self.w.name == "vdb-mini",
                "host": hostfacts.host(), "versions": hostfacts.versions()}     # as every kind records them

    def _load(self) -> dict:
        o, w = self.o, self.w
        mode = "query_count" if o.query_count else ("timed" if o.duration_s else w.mode)
        return {"mode": mode, "clients": o.clients or w.clients, "duration_s": o.duration_s or w.duration_s,
                "query_count": o.query_count or w.query_count}

    def _worker(self, out_dir: Path, build: bool, query: bool, counters: dict | None = None,
                joins: tuple = ()) -> dict:
        """Run the worker in the engine's venv; its result.json (a failure is a RunError in one line). `joins`:
        the cgroup.procs files the worker joins before it execs (the run's I/O and memory cgroups)."""
        work = out_dir / "vectordb" / "engine"
        work.mkdir(parents=True, exist_ok=True)
        w = self.w
        plan = {"engine": self.engine, "index": self.o.index, "build": build, "query": query,
                "data_dir": str(self.data_dir.resolve()), "index_dir": str(self.index_dir.resolve()),
                "metric": w.metric, "num_vectors": w.num_vectors, "dimension": w.dimension,
                "build_params": w.index_params(self.o.index), "threads": os.cpu_count() or 2,
                "search": dict(self.search), "cache_nodes": (self.dram or {}).get("cache_nodes") or 0,
                "load": self._load(), "uri": self.o.uri, "out_dir": str(work.resolve()),
                "collection": f"suite_{w.name.replace('-', '_')}_{self.o.index.lower()}",
                "counters": counters or {}, "warm_pass": bool(query),
                # diskannpy's search holds the GIL: C client processes (one node cache each), except at a DRAM
                # ratio, where one process's threads share the one cache the ratio sizes
                "client_processes": self.engine == "diskann" and not self.dram}
        files.write_atomic(work / "plan.json", files.dump_json(plan, indent=2))
        with open(work / "worker.log", "wb") as log:
            rc = subprocess.call([str(self.venv / "bin" / "python"), str(WORKER), str(work / "plan.json")],
                                 stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 preexec_fn=_joiner(joins) if joins else None)
        if rc != 0 or not (work / "result.json").is_file():
            tail = (work / "worker.log").read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise RunError(f"{work / 'worker.log'}: the {self.engine} worker exited {rc}: {tail[0][:300]}")
        return files.load_json(work / "result.json")

    # ---------------------------------------------------------------- one query run (run leaf)
    def run_once(self, k: int, drop) -> dict:
        leaf, ts = results.leaf(self.results_dir, self.engine, self.o.index, "run")
        self.leaves[k] = leaf
        cache = evidence.page_cache(self.index_dir) if self.index_dir.is_dir() else None
        dev = evidence.device_of(self.index_dir if self.index_dir.exists() else self.data_dir)
        status, error = "complete", None
        start = time.time()
        if self.o.dram_percent and self.dram is None:
            self.dram = dram.plan(self.o.dram_percent, self.index_dir, self.engine, self.o.index, self.w.num_vectors)
        with iocount.IoCgroup(dev.get("dev") or "", f"vdb-{os.getpid()}-{k}") as cg, \
                dram.cgroup(self.dram, k) as (mem_join, mem_evidence):
            try:
                self._worker(leaf, build=False, query=True, counters=iofigures.counters(dev.get("dev"), cg),
                             joins=tuple(j for j in (cg.join_file, mem_join) if j))
            except RunError as exc:
                status, error = "failed", str(exc)
        cg_evidence = cg.evidence()
        window = {"start_unix_s": start, "end_unix_s": time.time(), "hosts": [socket.gethostname()]}  # host_metrics' run
        doc = {**self._base("run"), "inserted_vectors": int(self.build.get("inserted_vectors") or 0), "k": self.w.k,
               "recall_floor": self.w.recall_floor, "status": status, "error": error, "run": k, **window,
               "page_cache_before": cache, "cache_drop": drop.to_dict(), "storage": dev, "load": self._load(),
               "search": {**self.search, "param": "ef" if self.o.index == "HNSW" else "search_list"},
               "dram": {**self.dram, "cgroup": mem_evidence()} if self.dram else None,
               "ground_truth": {**self.meta["ground_truth"], "sha256": self.meta["sha256"][dataset.TRUTH],
                                "file": str(self.data_dir / dataset.TRUTH)}}
        if status == "complete":
            import shutil

            shutil.copyfile(self.data_dir / dataset.TRUTH, leaf / "vectordb" / "groundtruth.ibin")   # recall's evidence
            truth_ids, _ = dataset.read_truth(self.data_dir / dataset.TRUTH)
            fig = results.figures(leaf / "vectordb" / "engine", truth_ids, self.w.k)
            res, cdf = fig.pop("result"), fig.pop("cdf")
            results.cdf(leaf, cdf)
            doc.update(fig)
            doc["io"] = {**iofigures.figures(res, dev.get("dev"), cg_evidence), "process_source": res.get("io_source")}
            doc["below_floor"] = fig["recall"] is not None and fig["recall"] < self.w.recall_floor
            if doc["below_floor"] and not self.o.sweep_point:
                status = doc["status"] = "failed"
                error = doc["error"] = (f"{leaf / 'summary.json'}: recall: expected at least {self.w.recall_floor} "
                                        f"(the workload's floor), got {fig['recall']:.4f}")
        results.metadata(leaf, ts, self.engine, self.o.index, "run", self.w,
                         {"engine_version": self.engine_version, "run": k, "override_parameters": self.o.overrides,
                          "search": self.search, "dram_percent": self.o.dram_percent})
        results.summary(leaf, doc)
        reference.write_run_leaf(leaf, doc, self.data_dir / dataset.TRUTH if "io" in doc else None, self.w.k)
        self.runs_done.append(doc)
        if status == "complete":
            enforced.say(f"[run {k}] {doc['throughput_qps']:.1f} QPS, p99 {doc['p99_latency_ms']:.2f} ms, "
                         f"recall@{self.w.k} {doc['recall']:.4f}, "
                         f"{(doc['io']['bytes_read_per_query'] or 0) / 1024:.1f} KiB read per query ({leaf})")
        return {"status": status, "error": error, "leaf": str(leaf)}

    def write_run_set(self, runs: list) -> None:
        where = Path(self.o.results_dir or getattr(self, "results_dir", ".")) / "vector_database" / self.engine / self.o.index
        if not where.is_dir():
            return
        doc = {"schema_version": 1, "kind": "vector_database-run-set", "workload": self.w.name,
               "engine": self.engine, "index_type": self.o.index, "runs_requested": self.o.runs or self.w.runs,
               "runs": [r.get("leaf") for r in runs], "complete": sum(r["status"] == "complete" for r in runs),
               "written_unix_s": time.time(), "argv": list(redact.command(sys.argv))}
        files.write_atomic(where / "vdb_run_set.json", files.dump_json(doc, indent=2))


def _joiner(joins: tuple):
    """A preexec hook: the child writes its pid into each cgroup.procs (os calls only, as suite.enforce.cgroup)."""
    def join():
        for path in joins:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
    return join


def run(opts: Options) -> tuple[Path, list[dict]]:
    job = VdbRun(opts)
    series, runs = enforced.run(job)
    return Path(series.results_dir), job.runs_done
