"""The vector_database dataset on disk, its generation and its exact ground truth.

Format (docs/vector-database.md), all little-endian, in DATA_DIR:
  vectors.fbin       uint32 n, uint32 d, then n*d float32 (row-major): the base vectors
                     (the big-ann-benchmarks / DiskANN `.fbin` layout, which diskannpy reads directly)
  queries.fbin       the same layout: the query vectors
  groundtruth.ibin   uint32 nq, uint32 k, nq*k uint32 ids, then nq*k float32 distances (the
                     big-ann "truthset" layout): each query's exact k nearest base vectors by the
                     workload's metric (L2: squared distance; COSINE: 1 - cosine; IP: -inner product)
  dataset.json       what was written: the workload, shape, metric, seed, each file's SHA-256, and
                     the ground truth's provenance (brute force, vectors scanned = coverage)

The ground truth is brute force over every base vector, in chunks of base vectors (bounded memory),
in parallel over blocks of queries (processes; each maps the base file).
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from pathlib import Path

from suite import files
from suite.errors import SuiteError

VECTORS, QUERIES, TRUTH, META = "vectors.fbin", "queries.fbin", "groundtruth.ibin", "dataset.json"
CHUNK_VECTORS = 65536            # base vectors per distance block (64 Ki x 1536 x 4 B = 384 MiB at most)
WRITE_ROWS = 65536
MAX_DIM = 32768


def header(path: Path) -> tuple[int, int]:
    """(rows, dimension) of an .fbin/.ibin file, checked against its size (one line when it does not fit)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
        size = path.stat().st_size
    except OSError as exc:
        raise SuiteError(f"{path}: expected a vector file ({VECTORS} layout), got {exc.strerror or exc}") from None
    if len(head) < 8:
        raise SuiteError(f"{path}: header: expected 8 bytes (uint32 rows, uint32 dimension), got {len(head)}")
    n, d = struct.unpack("<II", head)
    per_row = 4 * d if path.suffix == ".fbin" else 8 * d        # .ibin: ids and distances
    if d == 0 or d > MAX_DIM or size != 8 + n * per_row:
        raise SuiteError(f"{path}: size: expected 8 + {n} x {per_row} bytes for its header ({n} x {d}), "
                         f"got {size}")
    return n, d


def read_matrix(path: Path, rows: slice | None = None):
    """The float32 matrix of an .fbin file (memory-mapped)."""
    import numpy as np

    n, d = header(path)
    m = np.memmap(path, dtype="<f4", mode="r", offset=8, shape=(n, d))
    return m if rows is None else m[rows]


def read_truth(path: Path):
    """(ids uint32 nq x k, distances float32 nq x k) of groundtruth.ibin."""
    import numpy as np

    nq, k = header(path)
    raw = np.fromfile(path, dtype="<u4", offset=8, count=2 * nq * k)
    return raw[: nq * k].reshape(nq, k), raw[nq * k:].view("<f4").reshape(nq, k)


def _vectors(rng, rows: int, d: int, distribution: str):
    import numpy as np

    if distribution == "uniform":
        return rng.random((rows, d), dtype=np.float32)
    return rng.standard_normal((rows, d), dtype=np.float32)


def _write_fbin(path: Path, n: int, d: int, seed: int, distribution: str, stream: int) -> str:
    """Seeded vectors written row block by row block through a temp file and a rename; their SHA-256."""
    import numpy as np

    rng = np.random.default_rng([seed, stream])
    h = hashlib.sha256()
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        head = struct.pack("<II", n, d)
        f.write(head)
        h.update(head)
        for start in range(0, n, WRITE_ROWS):
            block = _vectors(rng, min(WRITE_ROWS, n - start), d, distribution).astype("<f4").tobytes()
            f.write(block)
            h.update(block)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return h.hexdigest()


sha256 = files.sha256      # the one file digest (suite.files)


def _prepared(x, metric: str):
    """What the distance is computed on: unit vectors for COSINE."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    if metric == "COSINE":
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return x / np.maximum(norms, np.float32(1e-30))
    return x


def _block_truth(args) -> tuple:
    """Exact top-k of queries [q0, q1) over every base vector, base chunk by base chunk."""
    import numpy as np

    base_path, query_path, metric, k, q0, q1, chunk = args
    q = _prepared(read_matrix(Path(query_path), slice(q0, q1)), metric)
    n, _ = header(Path(base_path))
    best_d = np.full((q1 - q0, k), np.inf, dtype=np.float32)
    best_i = np.zeros((q1 - q0, k), dtype=np.int64)
    qn = (q * q).sum(1, keepdims=True)
    for s in range(0, n, chunk):
        x = _prepared(read_matrix(Path(base_path), slice(s, min(n, s + chunk))), metric)
        dots = q @ x.T
        if metric == "L2":
            dist = np.maximum(qn - 2 * dots + (x * x).sum(1)[None, :], 0)
        elif metric == "COSINE":
            dist = 1 - dots
        else:
            dist = -dots
        both_d = np.concatenate([best_d, dist], axis=1)
        both_i = np.concatenate([best_i, np.arange(s, s + x.shape[0])[None, :].repeat(len(q), 0)], axis=1)
        top = np.argpartition(both_d, min(k, both_d.shape[1] - 1), axis=1)[:, :k]
        best_d = np.take_along_axis(both_d, top, 1)
        best_i = np.take_along_axis(both_i, top, 1)
    order = np.argsort(best_d, axis=1, kind="stable")
    return q0, np.take_along_axis(best_i, order, 1), np.take_along_axis(best_d, order, 1), n


def ground_truth(data_dir: Path, metric: str, k: int, processes: int, chunk: int = CHUNK_VECTORS) -> dict:
    """groundtruth.ibin: exact k nearest neighbours of every query, in parallel over query blocks.
    Returns its provenance (coverage: the base vectors every query was compared with)."""
    import numpy as np

    t0 = time.time()
    nq, _ = header(data_dir / QUERIES)
    n, _ = header(data_dir / VECTORS)
    step = max(1, -(-nq // max(1, processes * 4)))
    jobs = [(str(data_dir / VECTORS), str(data_dir / QUERIES), metric, k, q0, min(nq, q0 + step), chunk)
            for q0 in range(0, nq, step)]
    ids = np.zeros((nq, k), dtype="<u4")
    dist = np.zeros((nq, k), dtype="<f4")
    covered = []
    if processes > 1 and len(jobs) > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(processes) as pool:
            parts = pool.map(_block_truth, jobs)
    else:
        parts = [_block_truth(j) for j in jobs]
    for q0, bi, bd, scanned in parts:
        ids[q0:q0 + len(bi)] = bi
        dist[q0:q0 + len(bd)] = bd
        covered.append(scanned)
    tmp = data_dir / (TRUTH + ".tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<II", nq, k))
        f.write(ids.tobytes())
        f.write(dist.tobytes())
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, data_dir / TRUTH)
    return {"method": "brute-force", "metric": metric, "k": k, "queries": nq, "chunk_vectors": chunk,
            "processes": processes, "coverage_vectors": min(covered) if covered else 0, "num_vectors": n,
            "complete": bool(covered) and min(covered) == n, "duration_s": round(time.time() - t0, 3)}


def generate(w, data_dir: Path, processes: int | None = None, seed: int | None = None, say=print) -> dict:
    """Write the workload's vectors, queries and exact ground truth into `data_dir`; dataset.json last
    (its presence marks a complete dataset)."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / META).unlink(missing_ok=True)
    seed = w.seed if seed is None else seed
    processes = processes or os.cpu_count() or 1
    t0 = time.time()
    say(f"datagen {w.name}: {w.num_vectors:,} x {w.dimension} {w.distribution} vectors "
        f"({w.vector_bytes / 2**30:.3f} GiB) into {data_dir / VECTORS}")
    vec_sha = _write_fbin(data_dir / VECTORS, w.num_vectors, w.dimension, seed, w.distribution, 0)
    q_sha = _write_fbin(data_dir / QUERIES, w.num_queries, w.dimension, seed, w.distribution, 1)
    say(f"datagen {w.name}: exact ground truth (k={w.k}) of {w.num_queries} queries, brute force, "
        f"{processes} process(es)")
    truth = ground_truth(data_dir, w.metric, w.k, processes)
    doc = {"schema_version": 1, "kind": "vector_database-dataset", "workload": w.name,
           "num_vectors": w.num_vectors, "dimension": w.dimension, "distribution": w.distribution,
           "metric": w.metric, "num_queries": w.num_queries, "seed": seed, "vector_dtype": "float32",
           "sha256": {VECTORS: vec_sha, QUERIES: q_sha, TRUTH: sha256(data_dir / TRUTH)},
           "ground_truth": truth, "duration_s": round(time.time() - t0, 3), "generated_unix_s": time.time()}
    files.write_atomic(data_dir / META, files.dump_json(doc, indent=2))
    say(f"datagen {w.name}: done in {doc['duration_s']:.1f} s ({data_dir / META})")
    return doc


def verify(w, data_dir: Path) -> dict:
    """The dataset in `data_dir` is the workload's and complete: dataset.json, the files' shapes,
    the ground truth's. Bad input (missing ground truth, a dimension mismatch, another workload's
    data) is a SuiteError naming the file, the field, what was expected and what was found."""
    data_dir = Path(data_dir)
    meta_path = data_dir / META
    if not meta_path.is_file():
        raise SuiteError(f"{meta_path}: expected the dataset of {w.name} (suite datagen --workload {w.name} "
                         f"--data-dir {data_dir}), got no such file")
    doc = files.load_json(meta_path)
    if not isinstance(doc, dict) or doc.get("kind") != "vector_database-dataset":
        raise SuiteError(f"{meta_path}: kind: expected 'vector_database-dataset', got "
                         f"{doc.get('kind') if isinstance(doc, dict) else type(doc).__name__!r}")
    for key, want in (("dimension", w.dimension), ("num_vectors", w.num_vectors), ("metric", w.metric)):
        if doc.get(key) != want:
            raise SuiteError(f"{meta_path}: {key}: expected {want} (workload {w.name}), got {doc.get(key)!r}")
    truth_path = data_dir / TRUTH
    if not truth_path.is_file():
        raise SuiteError(f"{truth_path}: expected the exact ground truth (suite datagen writes it), got no such file")
    n, d = header(data_dir / VECTORS)
    nq, dq = header(data_dir / QUERIES)
    gq, gk = header(truth_path)
    if d != w.dimension:
        raise SuiteError(f"{data_dir / VECTORS}: dimension: expected {w.dimension} (workload {w.name}), got {d}")
    if dq != d:
        raise SuiteError(f"{data_dir / QUERIES}: dimension: expected {d} (the base vectors'), got {dq}")
    if n != w.num_vectors:
        raise SuiteError(f"{data_dir / VECTORS}: rows: expected {w.num_vectors} (workload {w.name}), got {n}")
    if gq != nq or gk < w.k:
        raise SuiteError(f"{truth_path}: shape: expected {nq} queries x at least k={w.k}, got {gq} x {gk}")
    gt = doc.get("ground_truth") or {}
    if gt.get("coverage_vectors") != n or gt.get("complete") is not True:
        raise SuiteError(f"{meta_path}: ground_truth.coverage_vectors: expected {n} (every base vector; "
                         f"Rules.md 5.3.5), got {gt.get('coverage_vectors')!r}")
    return doc
