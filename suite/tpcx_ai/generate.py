"""Phase 1, data generation: every table group's chunks for the three splits, as raw files.

Layout under the data directory, like the kit's generator output:
    raw/<split>/<table>/part-<chunk:05d>.csv          one CSV per chunk per table (pyarrow.csv)
    raw/<split>/<table>/<column>/<chunk:05d>-<i:06d>.<ext>
                                                      a binary column marked {b"ext": ...}: one
                                                      file per row; the CSV holds its path
                                                      relative to raw/<split>/<table>/
    raw/generation.json                               what was generated (the loader's manifest)
The serving split has no label columns. Chunks are made by P spawn-started worker processes in
any order; a chunk's bytes depend only on (group, sf, split, seed, chunk), and each file is
written under a temporary name and renamed, so any P gives the same bytes.
"""

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from suite import files
from suite.errors import RunError, SuiteError
from suite.tpcx_ai import spec

MANIFEST = "generation.json"
RAW = "raw"


@dataclass
class GenerationStats:
    rows: int = 0
    bytes: int = 0
    files: int = 0
    duration_s: float = 0.0
    tables: dict = field(default_factory=dict)    # {split: {table: {rows, bytes, chunks}}}

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.duration_s if self.duration_s > 0 else 0.0

    def to_dict(self) -> dict:
        return {"rows": self.rows, "bytes": self.bytes, "files": self.files, "duration_s": round(self.duration_s, 3),
                "rows_per_s": round(self.rows_per_s, 1), "mb_per_s": round(self.mb_per_s, 3)}


def raw_table_dir(data_dir: Path, split: str, table: str) -> Path:
    return Path(data_dir) / RAW / split / table


def part_name(chunk: int) -> str:
    return f"part-{chunk:05d}.csv"


def ext_columns(schema) -> dict[str, str]:
    """{column: file extension} of the binary columns written one file per row."""
    return {f.name: f.metadata[b"ext"].decode() for f in schema if f.metadata and b"ext" in f.metadata}


def raw_schema(schema, split: str):
    """The schema as written for a split: serving has no label columns."""
    if split != "serving":
        return schema
    import pyarrow as pa

    return pa.schema([f for f in schema if not spec.is_label(f)], metadata=schema.metadata)


def _replace(tmp: Path, path: Path) -> None:
    os.replace(tmp, path)


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    _replace(tmp, path)


def write_chunk_table(table, schema, data_dir: Path, split: str, name: str, chunk: int) -> tuple[int, int]:
    """Write one chunk of one table; returns (files written, bytes written)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    schema = raw_schema(schema, split)
    table = table.select(schema.names).cast(schema)
    out = raw_table_dir(data_dir, split, name)
    nfiles = nbytes = 0
    for column, ext in ext_columns(schema).items():
        folder = out / column
        folder.mkdir(parents=True, exist_ok=True)
        rel = []
        for i, value in enumerate(table.column(column).to_pylist()):
            if value is None:
                rel.append(None)
                continue
            rel_path = f"{column}/{chunk:05d}-{i:06d}.{ext}"
            _write_bytes(out / rel_path, value)
            rel.append(rel_path)
            nfiles, nbytes = nfiles + 1, nbytes + len(value)
        table = table.set_column(table.schema.get_field_index(column), column, pa.array(rel, pa.string()))
    out.mkdir(parents=True, exist_ok=True)
    path = out / part_name(chunk)
    tmp = path.with_name(f".{path.name}.tmp")
    pcsv.write_csv(table, tmp)
    nbytes += tmp.stat().st_size
    _replace(tmp, path)
    return nfiles + 1, nbytes


def chunk_task(task: tuple) -> dict:
    """Worker: one chunk of one group and split, every table of it written. Spawn-safe (top level)."""
    import importlib
    import sys

    module, paths, sf, split, seed, chunk, data_dir = task
    for p in paths:
        if p not in sys.path:
            sys.path.insert(0, p)
    group = importlib.import_module(module).GROUP
    schemas = group.schemas()
    made = group.generate(sf, split, seed, chunk)
    stats = {"group": group.name, "split": split, "chunk": chunk, "tables": {}}
    for name, table in made.items():
        if name not in schemas:
            raise RunError(f"{module}: chunk {chunk} of {split}: table {name!r} is not in the group's schemas")
        nfiles, nbytes = write_chunk_table(table, schemas[name], Path(data_dir), split, name, chunk)
        stats["tables"][name] = {"rows": table.num_rows, "bytes": nbytes, "files": nfiles}
    return stats


def plan(groups_and_modules, sf: float, seed: int, data_dir: Path, paths=()) -> list[tuple]:
    """Every chunk task of every group and split (the order they run in changes no byte)."""
    tasks = []
    for module, group in groups_and_modules:
        for split in spec.SPLITS:
            for chunk in range(group.chunks(sf, split)):
                tasks.append((module, tuple(paths), sf, split, seed, chunk, str(data_dir)))
    return tasks


def _clear(raw: Path) -> None:
    """Remove a previous generation (only our raw/ tree), so no stale chunk survives."""
    if raw.is_symlink():
        raise SuiteError(f"{raw}: expected a directory of generated data, got a symbolic link")
    if raw.exists():
        shutil.rmtree(raw)


def generate(registry, sf: float, seed: int, data_dir: Path, processes: int, progress=None,
             executor=None) -> GenerationStats:
    """Generate every installed table group's three splits into data_dir/raw with P processes."""
    modules = [m for m in registry.group_modules if m not in registry.missing_groups()]
    groups = list(zip(modules, registry.groups()))
    if not groups:
        raise SuiteError(f"table groups: expected at least one installed, got none of {', '.join(registry.group_modules)}")
    raw = Path(data_dir) / RAW
    _clear(raw)
    raw.mkdir(parents=True)
    tasks = plan(groups, sf, seed, data_dir, registry.paths)
    stats = GenerationStats()
    start = time.perf_counter()
    if executor is not None:        # the Dask engine: executor(tasks) yields the chunks' results
        _collect(executor(tasks), stats, len(tasks), progress, start)
    elif processes <= 1:
        _collect(map(chunk_task, tasks), stats, len(tasks), progress, start)
    else:
        _parallel(tasks, processes, stats, progress, start)
    stats.duration_s = time.perf_counter() - start
    manifest = {"schema_version": 1, "scale_factor": sf, "seed": seed, "processes": processes,
                "groups": [{"module": m, "name": g.name, "tables": sorted(g.schemas())} for m, g in groups],
                "chunks": per_table(stats.tables), "stats": stats.to_dict()}
    files.write_atomic(raw / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return stats


def _parallel(tasks, processes: int, stats: GenerationStats, progress, start: float) -> None:
    """Chunks over P spawn-started processes; a worker that dies fails the phase (never hangs)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = [pool.submit(chunk_task, t) for t in tasks]
        _collect((f.result() for f in as_completed(futures)), stats, len(tasks), progress, start)
    except BrokenProcessPool:
        raise RunError("generation: a generator process died (killed, or out of memory?)") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _collect(results, stats: GenerationStats, total: int, progress, start: float) -> None:
    for done, r in enumerate(results, start=1):
        for name, t in r["tables"].items():
            entry = stats.tables.setdefault(r["split"], {}).setdefault(name, {"rows": 0, "bytes": 0, "chunks": []})
            entry["rows"] += t["rows"]
            entry["bytes"] += t["bytes"]
            entry["chunks"].append(r["chunk"])
            stats.rows += t["rows"]
            stats.bytes += t["bytes"]
            stats.files += t["files"]
        if progress:
            progress(done, total, stats.rows, stats.bytes, time.perf_counter() - start)


def per_table(tables: dict) -> dict:
    """{split: {table: {rows, bytes, chunks}}}: what the manifest and a result record per table."""
    return {split: {name: {"rows": t["rows"], "bytes": t["bytes"], "chunks": sorted(t["chunks"])}
                    for name, t in sorted(per.items())} for split, per in sorted(tables.items())}


def read_manifest(data_dir: Path) -> dict:
    path = Path(data_dir) / RAW / MANIFEST
    if not path.is_file():
        raise SuiteError(f"{path}: expected the generated data's manifest, got none (generate the data first)")
    doc = files.load_json(path)
    if not isinstance(doc, dict) or doc.get("schema_version") != 1 or not isinstance(doc.get("chunks"), dict):
        raise SuiteError(f"{path}: expected a generation manifest (schema_version 1 with chunks), got something else")
    return doc
