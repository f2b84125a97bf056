"""The primary metric's name, qualified when a result's models are not all the kit's.

The kit's AIUCpm@SF is measured with the kit's ten models. A use case whose model is a
stand-in (its workload file says `substitute: true`: UC02, UC05 and UC09 today) trains and
serves in a different time, so a result that contains one is shown as `AIUCpm-sub@SF` in every
output (`suite run`, `metrics`, `check`, `report`), with a line naming the differing use cases.

    name = metric_name(sf, subs)       # "AIUCpm@1" or "AIUCpm-sub@1"
    line = substitutes_line(subs)      # "" or "substituted use cases ...: UC02 (...), ..."
"""

SUFFIX = "-sub"
LOAD_DIFFERS = ("load differs from the kit's: the kit's load is a copy of the generated CSV files and its "
                "jobs parse CSV inside their timed runs; here the load parses and type-checks the CSV into "
                "parquet (fsync'd) inside TLD, and the jobs read parquet")


def disclosures_of(doc) -> list[str]:
    """What a version-2 result says differs from the kit beyond its models (the load today); one
    written before the field existed loaded the same way."""
    said = doc.get("disclosures") if isinstance(doc, dict) else None
    if isinstance(said, list):
        return [str(x) for x in said]
    return [LOAD_DIFFERS] if isinstance(doc, dict) and doc.get("schema_version") == 2 else []


def substitutes_of(doc) -> list[dict]:
    """[{use_case, here, kit}] a version-2 result records; one written before the field existed
    ran the same stand-ins, so the installed definitions of its use cases say which."""
    subs = doc.get("substitutes") if isinstance(doc, dict) else None
    if isinstance(subs, list):
        return [s for s in subs if isinstance(s, dict)]
    if not isinstance(doc, dict) or doc.get("schema_version") != 2:
        return []                                            # an FDR data file: the kit's own run
    from suite.errors import SuiteError
    from suite.tpcx_ai import usecase
    from suite.tpcx_ai.registry import Registry

    try:
        return records(usecase.load_all(Registry(), sorted(n for n in doc.get("use_cases", []) if isinstance(n, int))))
    except SuiteError:
        return []


def records(use_cases) -> list[dict]:
    """The result's `substitutes` from the use cases that ran ({n: UseCase})."""
    return [{"use_case": n, "substitute": uc.substitute, "here": uc.algorithm, "kit": uc.reference_algorithm}
            for n, uc in sorted(use_cases.items()) if uc.substitute]


def metric_name(sf, subs) -> str:
    shown = f"{sf:g}" if isinstance(sf, (int, float)) else str(sf)
    return f"AIUCpm{SUFFIX if subs else ''}@{shown}"


def substitutes_line(subs) -> str:
    if not subs:
        return ""
    named = "; ".join(f"UC{s.get('use_case', 0):02d} {s.get('substitute') or 'a substitute'}" for s in subs)
    return f"{metric_name('SF', subs)}, not the kit's AIUCpm: substituted use cases: {named}"
