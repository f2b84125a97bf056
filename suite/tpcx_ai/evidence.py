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
from suite.tpcx_ai import rederive

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


MAX_SCORING_BYTES = 256 << 20   # a scoring file beyond it is not re-scored (said, not read)


def quality_problems(run_dir, doc: dict) -> tuple[list, list]:
    """Each quality value re-scored from the scoring output in place (output/scoring/ucNN/
    truth.parquet and predictions.parquet), with the kit's metric and keys: (items, statements)."""
    run_dir = Path(run_dir)
    r = rederive.Rederivation()
    quality = doc.get("quality") if isinstance(doc.get("quality"), dict) else {}
    if not quality or not (run_dir / "output" / "scoring").is_dir():
        return [], []
    from suite.tpcx_ai import usecase
    from suite.tpcx_ai.registry import Registry

    try:
        kit = usecase.load_all(Registry(), [n for n in range(1, 11) if f"uc{n}" in quality])
    except SuiteError:
        return [], []
    for n, uc in sorted(kit.items()):
        q = quality.get(f"uc{n}")
        if uc.metric == "none" or not isinstance(q, dict) or q.get("metric") != uc.metric:
            continue            # no metric, or another metric: the quality rule says so
        _rescore(run_dir, n, uc, q, r)
    return r.problems["figures.problems"], r.statements


def _rescore(run_dir, n, uc, q, r) -> None:
    import pandas as pd

    from suite.tpcx_ai import quality

    folder = run_dir / "output" / "scoring" / f"uc{n:02d}"
    paths = [folder / "truth.parquet", folder / "predictions.parquet"]
    figure, source = f"quality.uc{n}.value", f"output/scoring/uc{n:02d}/{{truth,predictions}}.parquet"
    if not all(p.is_file() and _inside(run_dir, p) and p.stat().st_size <= MAX_SCORING_BYTES for p in paths):
        r.state(figure, source, "not-rederivable", q.get("value"), "files absent, linked or too large")
        return
    try:
        value = quality.score(uc.metric, pd.read_parquet(paths[0]), pd.read_parquet(paths[1]), uc.keys, str(folder))
    except (SuiteError, OSError, ValueError, KeyError, TypeError) as exc:
        r.state(figure, source, "not-rederivable", q.get("value"), str(exc).splitlines()[0][:120] if str(exc) else "")
        return
    claimed = q.get("value")
    ok = isinstance(claimed, (int, float)) and abs(claimed - value) <= 1e-9 * max(1.0, abs(value))
    r.state(figure, source, "rederived" if ok else "mismatch", claimed, value)
    if not ok:
        r.problems["figures.problems"].append(rederive.problem(figure, value, claimed, f"re-scored from {source}"))
