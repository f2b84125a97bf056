"""What a kv_cache leaf's own evidence says, beside what its files claim (issue 36, class 4, 6, 11):
the trial commands (the duration each option ran, the ranks launched, the miniature's smaller entries),
the rank logs (a traceback or an I/O error such as ENOSPC fails the trial whatever the metadata
records), the rank files' elapsed times and the file-system probe (fs_separation.json, else the copy the metadata keeps). suite.kv_cache.check turns
these into facts; a fact that cannot be computed is reported as missing, never skipped."""

from __future__ import annotations

import re
from pathlib import Path

from suite import files
from suite.errors import ResultError
from suite.kv_cache import leaf as kvleaf
from suite.kv_cache.figures import ELAPSED_SLACK
from suite.rules.ops import Item

LOG_BYTES = 16 << 20        # a rank log is read up to 16 MiB
LOG_FAILURE = re.compile(r"Traceback \(most recent call last\)|No space left on device|\bENOSPC\b|"
                         r"Input/output error|\bEIO\b|\[Errno \d+\][^\n]{0,120}")
LOG_NAME = re.compile(r"kvcache_opt([1-9][0-9]?)_trial([0-9]{1,4})_[0-9A-Za-z_]{1,40}\.std(?:out|err)\.log")
LAUNCH_N = re.compile(r"(?:^|\s)-(?:n|np)\s+([0-9]{1,6})(?=\s)")
MINIATURE_CACHE = "kvcache-data/miniature"


def _item(field: str, expected, actual, where=None, note: str = "") -> Item:
    return Item(actual, where, field, expected, note=note, expected_given=True)


def trial_commands(lf: kvleaf.Leaf) -> list[str]:
    return [c for c in kvleaf.commands(lf) if "--rank-output-base" in c]


def durations(lf: kvleaf.Leaf) -> dict[int, float]:
    """{option: the shortest --duration (s) its trial commands ran}."""
    out: dict[int, float] = {}
    for c in trial_commands(lf):
        o, d = kvleaf.option_of(c), kvleaf.parse_command(c).get("--duration")
        if o is not None and isinstance(d, float) and d > 0:
            out[o] = min(d, out.get(o, d))
    return out


def ranks_launched(lf: kvleaf.Leaf) -> int | None:
    """The most ranks a trial command launched (mpiexec/mpirun -n N), None where no command says."""
    seen = [int(m.group(1)) for c in trial_commands(lf) for m in [LAUNCH_N.search(c)] if m]
    return max(seen) if seen else None


def miniature(lf: kvleaf.Leaf) -> list[str]:
    """Why the leaf is a miniature, from every place that records it: the metadata's flag, a trial
    command's --token-bytes-divisor above 1 (entries smaller than the model's), a rank file's own
    miniature mark or divisor, the miniature's cache dir. [] where none does."""
    why = []
    suite = (lf.metadata or {}).get("suite")
    if isinstance(suite, dict) and suite.get("miniature") is True:
        why.append("metadata suite.miniature: true")
    for i, c in enumerate(trial_commands(lf)):
        flags = kvleaf.parse_command(c)
        div = flags.get("--token-bytes-divisor")
        if div not in (None, 1):
            why.append(f"command_output_files[{i}].command --token-bytes-divisor {div} (real entries: 1)")
        base = flags.get("--rank-cache-base")
        if isinstance(base, str) and base.rstrip("/").endswith(MINIATURE_CACHE):
            why.append(f"command_output_files[{i}].command --rank-cache-base {base[-120:]} (the miniature's)")
    for (o, t, r), (_p, doc) in sorted(lf.ranks.items()):
        s = doc.get("suite_figures")
        params = s.get("params") if isinstance(s, dict) else None
        if isinstance(s, dict) and s.get("miniature") is True:
            why.append(f"option_{o}/trial_{t}/rank_{r} suite_figures.miniature: true")
        if isinstance(params, dict) and params.get("token_bytes_divisor") not in (None, 1):
            why.append(f"option_{o}/trial_{t}/rank_{r} suite_figures.params.token_bytes_divisor "
                       f"{str(params.get('token_bytes_divisor'))[:20]}")
    return why


def log_failures(lf: kvleaf.Leaf) -> list[Item]:
    """A trial whose rank log holds a traceback or an I/O error (ENOSPC, EIO, [Errno N]) failed."""
    out = []
    for name in lf.logs:
        m = LOG_NAME.fullmatch(name)
        path = lf.path / name
        if path.is_symlink():
            continue
        try:
            text = files.read_bytes(path, LOG_BYTES, ResultError, root=lf.path).decode("utf-8", "replace")
        except ResultError as exc:
            out.append(_item(name, "a readable rank log", str(exc)[:200], path))
            continue
        hit = LOG_FAILURE.search(text)
        if hit:
            where = f"option {m.group(1)} trial {m.group(2)}" if m else name
            out.append(_item(f"{where} log {name}", "no traceback or I/O error", hit.group(0)[:160], path))
    return out


def trial_failures(lf: kvleaf.Leaf) -> list[tuple[int | None, int | None, Item]]:
    """[(option, trial, why)] for every trial that failed, re-derived from the rank outputs whatever the
    metadata records: a rank log with a traceback or an I/O error, a trial whose ranks together served
    no request or token (`trial_served_nothing`), a rank whose requests wrote no entry or made no token
    (`rank_served_nothing`), a trial a command ran without its trial directory; and the metadata's own
    record of a trial not complete."""
    out = [(int(m.group(1)), int(m.group(2))) + (i,) if (m := LOG_NAME.fullmatch(Path(str(i.path)).name)) else (None, None, i)
           for i in log_failures(lf)]
    for (o, t, r), (path, doc) in sorted(lf.ranks.items()):
        why = rank_served_nothing(doc)
        if why:
            out.append((o, t, _item(f"option {o} trial {t} rank_{r} {why[0]}", why[1], why[2], path)))
    for (o, t), ranks in sorted(lf.rank_dirs.items()):
        docs = [lf.ranks[(o, t, r)][1] for r in ranks if (o, t, r) in lf.ranks]
        why = trial_served_nothing(docs)
        if why:
            out.append((o, t, _item(f"option {o} trial {t} {why[0]} over its {len(docs)} rank file(s)", why[1], why[2],
                                    lf.path / f"option_{o}" / f"trial_{t}")))
    ran = {(kvleaf.option_of(c), trial_of(c)) for c in trial_commands(lf)}
    out += [(o, t, _item(f"option {o} trial {t}", "its rank results (the trial command ran)",
                      f"no option_{o}/trial_{t}/ directory", lf.metadata_path))
            for o, t in sorted(x for x in ran if None not in x and x not in lf.rank_dirs)]
    suite = (lf.metadata or {}).get("suite")
    for d in (suite.get("trials") or []) if isinstance(suite, dict) and isinstance(suite.get("trials"), list) else []:
        if isinstance(d, dict) and d.get("status") != "complete":
            o, t = (d.get(k) if isinstance(d.get(k), int) and not isinstance(d.get(k), bool) else None
                    for k in ("option", "trial"))
            out.append((o, t, _item(f"option {d.get('option')} trial {d.get('trial')}", "complete", d.get("status"),
                                 lf.metadata_path, str(d.get("error") or "")[:200])))
    return out


COUNTS = (("requests_completed",), ("summary", "total_requests"), ("total_tokens_generated",), ("summary", "total_tokens"))


def _count(doc: dict, keys: tuple):
    for k in keys:
        doc = doc.get(k) if isinstance(doc, dict) else None
    return doc if isinstance(doc, (int, float)) and not isinstance(doc, bool) else None


def trial_served_nothing(docs: list[dict]) -> tuple[str, str, object] | None:
    """(field, expected, actual) where a trial's rank files together count no request or no token (the
    sum over its ranks), else None (a trial of no rank file is a missing-file finding, not this one)."""
    for keys in COUNTS:
        seen = [v for d in docs if (v := _count(d, keys)) is not None]
        if seen and sum(seen) <= 0:
            return ".".join(keys), "at least 1 (summed over the ranks)", sum(seen)
    return None


def rank_served_nothing(doc: dict) -> tuple[str, str, object] | None:
    """(field, expected, actual) where a rank that completed requests measured nothing: 0 tokens, or no
    entry written to any tier (summary.cache_stats.prefill_writes 0: every allocation refused)."""
    if not (_count(doc, COUNTS[0]) or 0) > 0:
        return None
    for keys in COUNTS[2:] + (("summary", "cache_stats", "prefill_writes"),):
        v = _count(doc, keys)
        if v is not None and v <= 0:
            return ".".join(keys), ("at least 1 entry written (0: every allocation refused, the cache dir without "
                                    "room)" if keys[-1] == "prefill_writes" else "at least 1 token"), v
    return None


def trial_of(command: str) -> int | None:
    """The trial a trial command ran: trial_<T> in its --rank-output-base."""
    base = kvleaf.parse_command(command).get("--rank-output-base")
    m = re.search(r"trial_([0-9]{1,4})(?:/|$)", base) if isinstance(base, str) else None
    return int(m.group(1)) if m else None


def elapsed_problems(lf: kvleaf.Leaf, ran: dict[int, float]) -> list[Item]:
    """Each rank's elapsed_time against its trial's --duration (a trial runs at least that long) and
    against the suite's own copy (suite_figures.elapsed_s, ours)."""
    out = []
    for (o, t, r), (path, doc) in sorted(lf.ranks.items()):
        elapsed = kvleaf.number(doc, ("summary", "elapsed_time"), path)
        name = f"option_{o}/trial_{t}/rank_{r} summary.elapsed_time"
        if o in ran and elapsed < ELAPSED_SLACK * ran[o]:
            out.append(_item(name, f"at least the trial's --duration, {ran[o]:g} s", elapsed, path))
        s = doc.get("suite_figures")
        own = s.get("elapsed_s") if isinstance(s, dict) else None
        if isinstance(own, (int, float)) and not isinstance(own, bool) and abs(own - elapsed) > 1e-6 * max(1.0, own):
            out.append(_item(name, f"suite_figures.elapsed_s, {own:g}", elapsed, path))
    return out


def separate(lf: kvleaf.Leaf) -> bool | None:
    """Whether the cache dir and the results dir were on different file systems: fs_separation.json
    (ours: `separate`; mlpstorage's: `same_filesystem`), else the probe the metadata keeps (ours:
    suite.fs_separation); None where neither records it."""
    docs = []
    sep = lf.path / "fs_separation.json"
    if sep.is_file():
        d = files.load_json(sep, error=ResultError, root=lf.path)
        docs.append(d if isinstance(d, dict) else {})
    suite = (lf.metadata or {}).get("suite")
    if isinstance(suite, dict) and isinstance(suite.get("fs_separation"), dict):
        docs.append(suite["fs_separation"])
    seen = []
    for d in docs:
        if isinstance(d.get("separate"), bool):
            seen.append(d["separate"])
        elif isinstance(d.get("same_filesystem"), bool):
            seen.append(not d["same_filesystem"])
    return all(seen) if seen else None
