"""`suite submission init/add/describe/package` for a round whose submission layout is `pooled`
(ruleset.yaml; v3.0): a tree in the published v3.0 layout.

    DIR/<division>/<Org>/results/<system>/{training/<model>/{datasize,datagen,run}/<ts>/,
                                           checkpointing/<model>/<ts>/}
    DIR/<division>/<Org>/systems/<system>.{yaml,pdf,md,html}
    DIR/<Org>/.mlps-image-pool, DIR/<Org>/code-<hash8>/{.code-hash.json, suite/...}   (the code pool)

- init: the layout, the pool's root, and a system description in the v3.0 schema from this host
  (clients from /proc; what cannot be read is listed under `todo`, and package refuses while any is left);
- add: leaves already in the v3.0 layout are copied as they are; a `suite run` results dir of the
  v3.0 round (run_set.json, run-<k>/) becomes `training/<model>/run/<ts>/` leaves (ts: each run's
  start), each with a `training_<ts>_metadata.json`; the installed suite package becomes a pool image
  (`code-<hash8>/`, its md5-tree-v2 hash by suite.layouts.pool.tree_md5) and every new leaf points at
  it with `.mlps-code-image`;
- describe: the description as Markdown, HTML and PDF (headless chromium) beside the YAML;
- package: refuses TODOs and a closed tree `suite check` (suite.published.check) does not accept;
  writes SHA256SUMS and the tarball.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import yaml

import suite
from suite import __version__, files, output
from suite.layouts import leaf_files as v3load
from suite.harness import leafstamp, provenance
from suite.layouts import pool as v3pool
from suite.layouts import leaves as layout_leaves
from suite.errors import SuiteError, expected_got
from suite.submission import create, host, place
from suite.submission import provenance as ran_code
from suite.submission.layout import MARKER, check_name, layout_of, marker_doc, open_tree

POOL_FILE = ".mlps-image-pool"


@dataclass(frozen=True)
class Copy:
    """One leaf `add` brings: from `src` to `to`, with the metadata file a converted `suite run` gets."""
    src: Path
    to: Path
    meta: dict | None


def system_doc(facts: host.HostFacts, system: str) -> dict:
    """A v3.0 system description from this host; `todo` names what a person must give."""
    todo = ["solution.friendly_description: what the storage solution is",
            "solution.usable_capacity_tib: the usable capacity in TiB (>= 1)",
            "solution.availability: available, preview or RDI",
            "deployment / product_nodes: onprem with the storage nodes itemized (rack_units, chassis.power "
            "with nameplate_power_watts) and total_rack_units, or cloud"]
    os_name, _, os_version = (facts.os_release or "Linux").partition(" ")
    client = {"friendly_description": f"benchmark client {facts.hostname}", "quantity": 1,
              "chassis": {"model_name": "TODO: the client's model", "cpu_model": facts.cpu_model or "TODO: CPU model",
                          "cpu_qty": facts.sockets or 1, "cpu_cores": facts.cores_per_socket or 1,
                          "memory_capacity": max(1, round((facts.memory_mib or 1024) / 1024))},
              "networking": [{"type": "ethernet", "unit_count": 1, "speed": max(1, int(n.speed_gbps or 1)),
                              "traffic": ["data"]} for n in facts.nics[:1]] or [
                  {"type": "ethernet", "unit_count": 1, "speed": 1, "traffic": ["data"]}],
              "operating_system": {"name": os_name or "Linux", "version": os_version or (facts.kernel or "unknown")}}
    if client["chassis"]["model_name"].startswith("TODO"):
        todo.append("clients[0].chassis.model_name: the client's model")
    return {"system_under_test": {
        "solution": {"submission_name": system, "friendly_description": "TODO: the storage solution",
                     "architecture": {"storage_location": "remote", "benchmark_API": "file", "product_API": "file",
                                      "client_footprint": "n/a", "client_installation": "n/a"},
                     "capabilities": {"multi_host": True, "simultaneous_write": True, "simultaneous_read": True,
                                      "remap_time_in_seconds": 0},
                     "usable_capacity_tib": 0, "availability": "TODO"},
        "deployment": "cloud", "clients": [client]}, "todo": todo}


def todos(doc) -> list[str]:
    out = [str(t) for t in doc.get("todo") or []] if isinstance(doc, dict) else []

    def walk(node, where):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")
        elif isinstance(node, str) and node.startswith("TODO"):
            out.append(f"{where}: {node}")
    if isinstance(doc, dict):
        walk(doc.get("system_under_test"), "system_under_test")
    return out


def init(root: Path, org: str, division: str, system: str, data_dir: Path | None, ruleset: str) -> list[str]:
    tree, target = create.tree_for_init(root, org, division, system, ruleset)
    root = Path(root)
    doc = system_doc(host.read(data_dir or root), system)
    schema = layout_of(ruleset).system_schema
    problems = files.schema_errors(doc, schema)
    if problems:                                   # our own output breaking the schema is a bug
        raise ValueError(f"{target}: system description breaks {schema}: {problems[0]}")
    for name in ("results", "systems"):
        (tree.org_dir / name).mkdir(parents=True, exist_ok=True)
    pool = root / org
    pool.mkdir(parents=True, exist_ok=True)
    if not (pool / POOL_FILE).exists():
        files.write_atomic(pool / POOL_FILE, f"suite_version={__version__}\ncreated_at={_now()}\n")
    files.write_atomic(target, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    if not (root / MARKER).is_file():
        files.write_json(root / MARKER, marker_doc(ruleset, division, org, __version__), schema="submission")
    return [f"suite submission init: {tree.org_dir} ({ruleset}, {division}); code pool {pool}",
            f"  system description: {target} ({len(doc['todo'])} TODO field(s) to fill in)",
            *(f"    TODO {t}" for t in doc["todo"])]


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- the code pool


def stage_image(staging: place.Staging, pool: Path) -> str:
    """The installed suite package as a pool image, built in `staging` and hashed (suite.layouts.pool's
    md5-tree-v2, the checker's own); placed at `code-<hash8>/` on commit unless an image is there already
    (reused). Its hash."""
    pkg = Path(suite.__file__).resolve().parent
    tmp = staging.work / "code-image"
    for rel, src in v3pool.code_files(pkg):
        dst = tmp / provenance.IMAGE_DIR / rel        # the layout a run's provenance hashes (the same hash)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    digest = v3pool.tree_md5(tmp)
    final = v3pool.image_dir(pool, digest)
    if final.is_dir():
        shutil.rmtree(tmp)
        return digest
    files.write_atomic(tmp / ".code-hash.json", json.dumps(
        {"hash": digest, "algorithm": "md5-tree-v2", "captured_at": _now(), "suite_version": __version__,
         "git_sha": None}, indent=2) + "\n")
    staging.adopt(tmp, final)
    return digest


# --------------------------------------------------------------------------- add


HANDED_OVER = ("kv_cache", "vector_database")    # benchmark folders whose leaves their own kinds vet (`delegate`)


def _is_v3_layout(d: Path) -> str | None:
    """Where a v3.0-layout results dir goes below results/<system>/ ('' for a dir holding
    training/, checkpointing/, kv_cache/ or vector_database/), or None."""
    if any((d / b).is_dir() for b in ("training", "checkpointing", *HANDED_OVER)):
        return ""
    if any((d / p).is_dir() for p in ("run", "datasize", "datagen")):
        return f"training/{check_name('workload', d.name)}"
    kids = [p for p in d.iterdir() if p.is_dir()] if d.is_dir() else []
    if kids and all(leafstamp.is_stamp(p.name) for p in kids) and d.name.startswith("llama"):
        return f"checkpointing/{check_name('workload', d.name)}"
    return None


def refusal(res: dict, where: Path, division: str) -> str | None:
    """Why a `suite run` result may not enter a submission of `division`, or None: a run that failed or
    did not complete never enters one; a miniature, or a run its own record says is not compliant,
    never enters a closed one (issue 36: results that lie)."""
    if res.get("status") != "complete" or res.get("complete") is not True or res.get("error"):
        return expected_got(where, "status", "a complete run", f"{res.get('status')!r}"
                            + (f" ({str(res.get('error'))[:120]})" if res.get("error") else ""))
    if division != "closed":
        return None
    if res.get("miniature") is not False:
        return expected_got(where, "miniature", "false (a closed submission holds full-size runs)",
                            repr(res.get("miniature")))
    comp = res.get("compliance") if isinstance(res.get("compliance"), dict) else {}
    if comp.get("compliant") is not True:
        reasons = "; ".join(str(r) for r in (comp.get("reasons") or [])[:2])[:160]
        return expected_got(where, "compliance.compliant", "true (the run's own verdict)",
                            f"{comp.get('compliant')!r}" + (f": {reasons}" if reasons else ""))
    return None


def _from_suite_run(src: Path, dest_system: Path, ruleset: str, division: str = "closed") -> list[Copy]:
    """A `suite run` results dir of the tree's round, as training/<model>/run/<ts>/ leaves (each with its
    metadata file); every run is vetted (`refusal`) here, before anything is copied."""
    runs = sorted((p for p in src.glob("run-*") if (p / "results.json").is_file()),
                  key=lambda p: int(p.name.split("-")[1]) if p.name.split("-")[1].isdigit() else 0)
    if not (src / "run_set.json").is_file() or not runs:
        raise SuiteError(expected_got(src, "RESULTS", "a results dir in the published layout (training/, checkpointing/, "
                                      "<model>/run/<ts>/) or a `suite run` results dir (run_set.json, run-<k>/)",
                                      "neither"))
    failed = sorted(p.name for p in src.glob("run-*") if p.is_dir() and not (p / "results.json").is_file())
    if failed:                                # a run killed before it wrote its record (OOM, a signal)
        raise SuiteError(expected_got(src / failed[0], "results.json", "the run's record (a complete run)",
                                      "none: the run did not finish"))
    out = []
    for run in runs:
        res = files.load_json(run / "results.json", root=src)
        if res.get("ruleset") != ruleset:
            raise SuiteError(expected_got(run / "results.json", "ruleset", ruleset, repr(res.get("ruleset"))))
        why = refusal(res, run / "results.json", division)
        if why:
            raise SuiteError(why)
        s = v3load.summary(run / "summary.json", src)
        ts = leafstamp.of(s.start)            # DLIO's naive local start: the rules' clock
        model = check_name("workload", str(res.get("workload")))
        meta = {"benchmark_type": "training", "model": model, "command": "run", "run_datetime": ts,
                "num_processes": res.get("num_accelerators"), "accelerator": res.get("accelerator"),
                "parameters": {"dataset": {"num_files_train": s.num_files_train}},
                "written_by": f"suite {__version__} submission add from {run.name}"}
        out.append(Copy(run, dest_system / "training" / model / "run" / ts, meta))
    return out


def _plan(src: Path, dest: Path, ruleset: str, division: str, delegate=None) -> list[Copy]:
    """What one RESULTS brings: its leaves (vetted) and where each goes below results/<system>/."""
    where = _is_v3_layout(src) if src.is_dir() else None
    if where is None:
        return _from_suite_run(src, dest, ruleset, division)
    if where:
        return _leaves(src, dest / where, division, delegate)
    out = []
    for item in sorted(p for p in src.iterdir() if p.is_dir()):
        for model in sorted(p for p in item.iterdir() if p.is_dir()):
            out += _leaves(model, dest / item.name / model.name, division, delegate)
    return out


def add(root: Path, results: list[Path], system: str, replace: bool, delegate=None, allow_code: bool = False) -> list[str]:
    """Every RESULTS vetted and every target checked before anything is copied; the copies, metadata,
    code pointers and pool images built in one staging folder inside the tree and renamed into place
    together (suite.submission.place.Staging): a refused or stopped add leaves the tree as it was.
    Each leaf's code is the code that ran (`code_problems`), unless `allow_code` (--allow-code-mismatch)."""
    tree = open_tree(root)
    if not tree.layout.pooled:
        raise SuiteError(expected_got(root / MARKER, "ruleset", "a round whose submission layout is pooled",
                                      tree.ruleset))
    if not tree.system_file(system).is_file():
        raise SuiteError(expected_got(tree.system_file(system), "file", "a system description (suite submission init "
                                      "--system " + system + ")", "none"))
    dest = tree.org_dir / "results" / check_name("system", system)
    copies: list[Copy] = []
    for src in map(Path, results):
        output.outside(dest, "DIR", [src])
        copies += _plan(src, dest, tree.ruleset, tree.division, delegate)
        ran_code.refuse(code_problems(src, tree.root / tree.org), allow_code)
    seen: set[Path] = set()
    for c in copies:
        if c.to.exists() or c.to.is_symlink() or c.to in seen:
            raise SuiteError(expected_got(c.to, "target", "a new leaf", "an existing one" if c.to not in seen
                                          else "two RESULTS bringing it"))
        seen.add(c.to)
    pool = tree.root / tree.org
    with place.Staging(tree.root) as staging:
        staged = []
        for c in copies:
            tmp = staging.stage(c.to)
            shutil.copytree(c.src, tmp, symlinks=True)
            if c.meta is not None:
                files.write_atomic(tmp / f"training_{c.meta['run_datetime']}_metadata.json",
                                   json.dumps(c.meta, indent=2) + "\n")
            staged.append(tmp)
        digest = stage_image(staging, pool)
        for tmp in staged:                   # a leaf that names its own code image keeps it (provenance)
            if not (tmp / ".mlps-code-image").is_file():
                files.write_atomic(tmp / ".mlps-code-image", f"md5-tree-v2:{digest}")
        _stage_images(staging, list(map(Path, results)), staged, pool)
        staging.commit()
    return [f"suite submission add: {len(copies)} leaves into {dest}", f"  code image: {tree.org}/code-{digest[:8]}/"]


def _run_dirs(src: Path) -> list[Path]:
    """The run directories one RESULTS brings: a `suite run` dir's run-<k>/, else its timestamped leaves."""
    if not src.is_dir():
        return []
    if _is_v3_layout(src) is None:        # not a `suite run` dir at all: _from_suite_run says so
        return sorted(p for p in src.glob("run-*") if p.is_dir() and (p / "results.json").is_file()) \
            if (src / "run_set.json").is_file() else []
    return sorted(p for p in src.rglob("*") if p.is_dir() and not p.is_symlink() and leafstamp.is_stamp(p.name))


def code_problems(src: Path, pool: Path) -> list[str]:
    """Where a run's code would not be the code stamped on it: a leaf without a pointer gets the installed
    package's image (its recorded code must be that); a leaf of ours keeping its own pointer needs that
    pointer to be its record and the image at hand (the tree's pool, a source's pool, or the installed
    package). A leaf of another party's (a pointer, no record of ours) is theirs: CHECK-01 resolves it."""
    now = provenance.for_run()["hash"]
    out = []
    for run in _run_dirs(src):
        try:
            ours = _is_ours(run)
            own = ran_code.pointed(run)
            if own is None and (ours or _is_v3_layout(src) is None):
                why = ran_code.problem(run, now, root=src)
            elif own is not None and ours:
                why = ran_code.problem(run, own, root=src) or (None if own == now or _image_at_hand(own, src, pool) else
                      expected_got(run / ".mlps-code-image", "image", f"the image of the code that ran ({own}) in a pool "
                                   f"at hand", f"none (the code present now is {now})"))
            else:
                why = None
        except SuiteError as exc:
            why = str(exc)
        if why:
            out.append(why)
    return out


def _is_ours(run: Path) -> bool:
    return (run / ran_code.RECORD_FILE).is_file() or layout_leaves.ours(run)


def _image_at_hand(h: str, src: Path, pool: Path) -> bool:
    if (pool / f"code-{h[:8]}").is_dir():
        return True
    for anc in list(Path(os.path.realpath(src)).parents)[:8]:
        if any(d.is_dir() and not d.is_symlink() for d in anc.glob(f"*/code-{h[:8]}")):
            return True
    return False


def _leaves(src: Path, dst: Path, division: str = "closed", delegate=None) -> list[Copy]:
    """Every timestamped leaf below `src` (a training, checkpointing, kv_cache or vector_database model
    dir), each vetted here, before anything is copied: a leaf of our own training runs by its results.json
    (`refusal`), a kv_cache or vector_database leaf by its own kind's check (`vetted`)."""
    out = []
    bench = dst.parent.name                  # results/<system>/<benchmark>/<model or engine>
    if bench in HANDED_OVER:                 # as the tree's check hands them over: the whole model (engine) dir
        vetted(src, bench, division, delegate)
    stamped = sorted(p for p in src.rglob("*") if p.is_dir() and leafstamp.is_stamp(p.name))
    for leaf in stamped:
        if (leaf / "results.json").is_file():
            why = refusal(files.load_json(leaf / "results.json", root=src), leaf / "results.json", division)
            if why:
                raise SuiteError(why)
        for meta in sorted(leaf.glob("*_metadata.json")):   # a leaf filed under another benchmark: refused
            said = files.load_json(meta, root=src)
            kind = said.get("benchmark_type") if isinstance(said, dict) else None
            if isinstance(kind, str) and kind != bench:
                raise SuiteError(expected_got(meta, "benchmark_type", f"{bench}, as the folder it goes to",
                                              repr(kind[:40])))
        out.append(Copy(leaf, dst / leaf.relative_to(src), None))
    if bench not in HANDED_OVER and delegate is not None and any(layout_leaves.ours(p) for p in stamped):
        said = delegate(src, bench)          # our own runs: graded by their kind, as the tree's check grades them
        if said is not None:
            _admitted(src, said, bench, division)
    return out


def vetted(src: Path, bench: str, division: str, delegate) -> None:
    """kv_cache or vector_database results enter a submission only as their own kind's check grades
    them: never invalid ones (a failed trial, a miniature, a broken rule), in a closed tree only closed
    (compliant) ones; one line naming the results and what the check said otherwise."""
    from suite.published import check as v3check

    cut: list = []
    taken = list(v3check.descend(src, delegate, cut)) if delegate is not None else []   # as the tree's check walks
    if cut or not taken:
        raise SuiteError(expected_got(src, bench, f"{bench} results their kind checks", "a walk cut at its bound"
                                      if cut else "none that a kind recognises"))
    for where, said in taken:
        _admitted(where, said, bench, division)


def _admitted(where: Path, said: dict, bench: str, division: str) -> None:
    """Never an invalid result (a failed run, a miniature, a broken rule); in a closed tree only a closed
    (compliant) one; one line naming the results and what their kind's check said otherwise."""
    want = ("closed",) if division == "closed" else ("closed", "open")
    if said["verdict"] not in want or (division == "closed" and not said["compliant"]):
        raise SuiteError(expected_got(where, "suite check", f"a {' or '.join(want)} {bench} result ("
                                      f"the submission is {division})", f"{said['summary'][:200]}"))


def _stage_images(staging: place.Staging, sources: list[Path], leaves: list[Path], pool: Path) -> None:
    """The pool images the staged leaves name, from the source trees' pools (`<Org>/code-<hash8>/` beside
    an ancestor of a source), staged into ours; an image not found stays unresolved, and the checker says
    so (CHECK-01)."""
    wanted = set()
    for leaf in leaves:
        p = leaf / ".mlps-code-image"
        if p.is_file():
            m = v3load.POINTER_RE.match(p.read_text(errors="replace").strip())
            if m:
                wanted.add(f"code-{m.group('hash')[:8]}")
    placed = set(staging.targets())
    for name in sorted(wanted):
        if (pool / name).exists() or pool / name in placed:
            continue
        for anc in (a for src in sources for a in list(Path(os.path.realpath(src)).parents)[:8]):
            found = [d for d in anc.glob(f"*/{name}") if d.is_dir() and not d.is_symlink()]
            if found:
                shutil.copytree(found[0], staging.stage(pool / name), symlinks=True)
                break
