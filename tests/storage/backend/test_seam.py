"""The storage backend seam: no module of suite/storage outside suite/storage/backend/ opens, lists,
reads, writes, syncs, renames or sizes up dataset or checkpoint files itself (an AST scan).

What a module may still do itself is the short allow-list below, each entry with why it is not
dataset or checkpoint access; an entry no longer used fails the test too, so the list cannot rot.
Not a file access of the data either: generation_log.json beside the dataset is metadata, read and
written through suite/files.py (bounded, schema-checked JSON), which this scan does not flag.
"""

import ast
from pathlib import Path

import suite

SUITE = Path(suite.__file__).resolve().parent
STORAGE = SUITE / "storage"
BACKEND = STORAGE / "backend"
# The modules that move dataset and checkpoint bytes: the storage layer, the training dataset and runner
# and the checkpointing kind's run modules (its check, figures and page read results, not the data). The
# page cache's own layer (suite/enforce/cache.py: drop, residency, the ceilings' pre-read of a local dataset
# to fill the cache) is not the data path and is not scanned.
SCANNED = [*STORAGE.rglob("*.py"), *(SUITE / "training" / "data").rglob("*.py"),
           *(SUITE / "training" / "run").rglob("*.py"), SUITE / "training" / "leaf.py",
           SUITE / "harness" / "leafstamp.py",        # the leaf names every kind's writers pick
           *(p for p in (SUITE / "checkpointing").glob("*.py") if p.name not in ("check.py", "figures.py", "page.py"))]

CALLS = {   # dotted call names (after import aliases) that only the backend may make
    "open", "io.open", "os.open", "os.fdopen", "os.pread", "os.preadv", "os.pwrite", "os.pwritev", "os.writev",
    "os.listdir", "os.scandir", "os.walk", "os.statvfs", "os.fstatvfs", "os.posix_fallocate", "os.posix_fadvise",
    "os.fsync", "os.fdatasync", "os.sync", "os.rename", "os.replace", "os.renames", "shutil.disk_usage",
    "h5py.File", "numpy.load", "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.fromfile",
    "numpy.memmap", "mmap.mmap",
}
METHODS = {"glob", "rglob", "iterdir"}     # pathlib listings, whatever the receiver
ON_FILE_OBJECTS = {"h5py.File", "numpy.load", "numpy.save", "numpy.savez", "numpy.savez_compressed"}
# ... which are fine on memory (a name bound to io.BytesIO()) or on a backend handle's .fileobj()
ATTRIBUTES = {"O_DIRECT", "POSIX_FADV_SEQUENTIAL", "POSIX_FADV_DONTNEED"}

ALLOWED = {  # (module under suite/storage, call): why it is not dataset or checkpoint access
    ("training/run/loader.py", "mmap.mmap"):
        "anonymous page-aligned buffers for O_DIRECT reads (mmap(-1, n)): memory, not a file",
    ("training/data/parquet_read.py", "mmap.mmap"):
        "the Parquet reader's anonymous map its column chunks are read into (mmap(-1, n)): memory, not a file",
    ("training/run/rank.py", "open"): "rank 0's dlio.log in the results directory",
    ("training/run/results.py", "open"): "dlio.log in the results directory",
    ("training/run/dlio.py", "open"): "DLIO's stdout log in the results directory",
    ("training/run/dlio.py", "glob"): "the DLIO engine's installed workload configs (a virtual environment)",
    ("storage/workloads.py", "glob"): "the workload YAML files shipped with the package",
    ("harness/leafstamp.py", "iterdir"): "the names of the v3.0 leaves in the results directory (the next one is later)",
    ("checkpointing/leaf.py", "iterdir"): "the v3.0 timestamp leaves of checkpointing/<model>/ in the results directory",
    ("checkpointing/size.py", "iterdir"):
        "the <rank>_per_epoch_stats.json files of a checkpointing leaf, checked against the model's layout (results)",
    ("checkpointing/dlio_ckpt.py", "iterdir"):
        "the <rank>_per_epoch_stats.json files of a checkpointing leaf (results, not checkpoint data)",
    ("checkpointing/leaf.py", "glob"): "the ranks' error files of run-1/errors/ in the results directory",
}


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted origin, from the module's imports (any depth: function-level ones too)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _dotted(node, aliases: dict) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = aliases.get(node.id, node.id)
    return ".".join([head, *reversed(parts)])


def _memory_names(tree: ast.Module, aliases: dict) -> set[str]:
    """Names assigned io.BytesIO() anywhere in the module."""
    return {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and _dotted(node.value.func, aliases) == "io.BytesIO" for t in node.targets if isinstance(t, ast.Name)}


def _not_a_path(call: ast.Call, memory: set) -> bool:
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Name):
        return first.id in memory
    return (isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute)
            and first.func.attr == "fileobj")


def uses(path: Path) -> set[tuple[str, int]]:
    """(what, line) of every backend-only call or attribute in one module."""
    tree = ast.parse(path.read_text(), str(path))
    aliases, found = _aliases(tree), set()
    memory = _memory_names(tree, aliases)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func, aliases)
            if name in ON_FILE_OBJECTS and _not_a_path(node, memory):
                continue
            if name in CALLS:
                found.add((name, node.lineno))
            elif isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
                found.add((node.func.attr, node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES:
            found.add((node.attr, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "shutil", "h5py", "numpy", "io"):
            found.update((f"{node.module}.{a.name}", node.lineno) for a in node.names
                         if f"{node.module}.{a.name}" in CALLS or a.name in ATTRIBUTES)
    return found


def storage_uses() -> dict[tuple[str, str], list[int]]:
    out: dict = {}
    for path in sorted(SCANNED):
        if BACKEND in path.parents:
            continue
        rel = path.relative_to(SUITE).as_posix()
        for what, line in uses(path):
            out.setdefault((rel, what), []).append(line)
    return out


def test_no_module_outside_the_backend_touches_dataset_files_itself():
    found = storage_uses()
    bad = {f"suite/{rel}:{min(lines)}: {what}" for (rel, what), lines in found.items()
           if (rel, what) not in ALLOWED}
    assert not bad, f"dataset/checkpoint access outside suite/storage/backend/: {sorted(bad)}"


def test_the_allow_list_has_no_stale_entries():
    found = storage_uses()
    assert not [key for key in ALLOWED if key not in found]


def test_the_scan_sees_what_it_looks_for(tmp_path):
    """The scanner itself: aliases, function-level imports, methods, attributes and from-imports."""
    src = tmp_path / "m.py"
    src.write_text("import io\nimport os as o\nimport numpy as np\nfrom os import replace\n"
                   "def f(p, h):\n    import h5py\n    o.open(p, o.O_RDONLY | o.O_DIRECT)\n    np.load(p)\n"
                   "    h5py.File(p)\n    p.glob('*')\n    open(p)\n    replace(p, p)\n"
                   "    b = io.BytesIO()\n    h5py.File(b, 'w')\n    np.load(h.fileobj())\n")
    assert {w for w, _ in uses(src)} == {"os.open", "O_DIRECT", "numpy.load", "h5py.File", "glob", "open",
                                         "os.replace"}


def test_the_backend_itself_is_where_the_calls_are():
    """The POSIX backend holds the calls the scan keeps out of everything else."""
    found = {w for w, _ in uses(BACKEND / "posix.py")}
    assert {"os.open", "O_DIRECT", "os.scandir", "os.statvfs", "os.fsync", "os.replace", "os.pwrite",
            "os.posix_fadvise"} <= found
