"""The evidence below a TPCx-AI result's generation record, where the run directory holds it:
the generator's manifest (data/raw/generation.json) and the loaded parquet files' row counts
(data/<split>/<table>.parquet, read from their footers).

    items, statements = evidence.data_problems(run_dir, doc)

Only the default layout inside the run directory is read (a result's recorded data_dir is an
absolute path of the machine that ran it: never followed), nothing through a symbolic link, and
only files the generation record names; a parquet footer is read, never the data.
"""

from pathlib import Path

from suite import files
from suite.errors import SuiteError
from suite.tpcxai import rederive

DATA = "data"
MANIFEST = ("raw", "generation.json")
MAX_TABLES = 200


def _inside(root: Path, path: Path) -> bool:
    """`path` under `root` with no symbolic link on the way (nothing read through a link)."""
    rel = path.relative_to(root)
    step = root
    for part in rel.parts:
        step = step / part
        if step.is_symlink():
            return False
    return True


def data_problems(run_dir, doc: dict) -> tuple[list, list]:
    """(problem items for the fact sizes.problems, re-derivation statements)."""
    run_dir = Path(run_dir)
    data = run_dir / DATA
    r = rederive.Rederivation()
    gen = doc.get("generation") if isinstance(doc.get("generation"), dict) else {}
    tables = gen.get("tables") if isinstance(gen.get("tables"), dict) else {}
    if not data.is_dir() or data.is_symlink():
        r.state("generation.tables", "data/ in the run directory", "not-rederivable", None, "no data directory")
        return [], r.statements
    _manifest(run_dir, data, doc, tables, r)
    _parquet(run_dir, data, tables, r)
    return r.problems["sizes.problems"], r.statements


def _manifest(run_dir, data, doc, tables, r) -> None:
    path = data.joinpath(*MANIFEST)
    if not path.is_file() or not _inside(run_dir, path):
        return
    try:
        man = files.load_json(path)
    except SuiteError:
        return
    if not isinstance(man, dict):
        return
    where = "data/raw/generation.json"
    sf = man.get("scale_factor")
    ok = sf == doc.get("scale_factor")
    r.state("scale_factor", where, "rederived" if ok else "mismatch", doc.get("scale_factor"), sf)
    if not ok:
        r.problems["sizes.problems"].append(rederive.problem("scale_factor", sf, doc.get("scale_factor"),
                                                             f"the scale factor {where} was generated at"))
    chunks = man.get("chunks") if isinstance(man.get("chunks"), dict) else {}
    for split, per in sorted(tables.items(), key=str)[:MAX_TABLES]:
        for name, t in sorted(per.items(), key=str)[:MAX_TABLES] if isinstance(per, dict) else ():
            got = (chunks.get(split) or {}).get(name, {}) if isinstance(chunks.get(split), dict) else {}
            rows = got.get("rows") if isinstance(got, dict) else None
            claimed = t.get("rows") if isinstance(t, dict) else None
            if rows is not None and rows != claimed:
                r.problems["sizes.problems"].append(rederive.problem(
                    f"generation.tables.{split}.{name}.rows", rows, claimed, f"the rows {where} records"))


def _parquet(run_dir, data, tables, r) -> None:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return
    compared = mismatched = 0
    for split, per in sorted(tables.items(), key=str)[:MAX_TABLES]:
        if split not in ("training", "serving", "scoring") or not isinstance(per, dict):
            continue
        for name, t in sorted(per.items(), key=str)[:MAX_TABLES]:
            path = data / split / f"{name}.parquet"
            if "/" in name or name.startswith(".") or not path.is_file() or not _inside(run_dir, path):
                continue
            try:
                rows = pq.read_metadata(path).num_rows
            except (OSError, ValueError):   # a damaged footer (ArrowInvalid is a ValueError): no evidence
                continue
            compared += 1
            claimed = t.get("rows") if isinstance(t, dict) else None
            if rows != claimed:
                mismatched += 1
                r.problems["sizes.problems"].append(rederive.problem(
                    f"generation.tables.{split}.{name}.rows", rows, claimed, f"the rows of data/{split}/{name}.parquet"))
    if compared:
        r.state("generation.tables", "data/<split>/<table>.parquet row counts",
                "mismatch" if mismatched else "rederived", None, f"{compared - mismatched} of {compared} tables match")
