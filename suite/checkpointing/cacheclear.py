"""A checkpointing run's cache-clear records held to themselves (issue 46): a run's results.json keeps the
drop the harness made (`enforcement.cache_drop`, and each host's under `enforcement.hosts[]`) and, for a
v3.0 read, the handoff's own record of the same clear (`handoff.cache_clear`: performed, succeeded, error,
/proc/meminfo before and after, the checkpoint's resident bytes before and after, mincore). A clear
recorded as succeeded is contradicted by the same records when it was not attempted (performed), carries an
error, left more of the checkpoint resident than before it or more than RESIDENT_FRACTION of the checkpoint
per client, when the handoff and the harness disagree on whether their one clear succeeded, or when a
meminfo sample holds more page cache than memory.

The system-wide page-cache counter (cached_bytes_before/after) is not held to falling: other processes'
writes during the sync move it (training's contradictions say the same); the checkpoint's own pages
(mincore) decide.
"""

from __future__ import annotations

from suite.numbers import is_number
from suite.rules.ops import Item

RESIDENT_FRACTION = 0.5


def contradictions(doc: dict, path) -> list[Item]:
    """[Item] per self-contradiction of the run's cache-clear records."""
    enf = doc.get("enforcement") if isinstance(doc.get("enforcement"), dict) else {}
    drops = [("enforcement.cache_drop", enf.get("cache_drop"))]
    hosts = enf.get("hosts") if isinstance(enf.get("hosts"), list) else []
    drops += [(f"enforcement.hosts[{i}].cache_drop", h.get("cache_drop")) for i, h in enumerate(hosts) if isinstance(h, dict)]
    out = []
    for where, d in drops:
        if isinstance(d, dict) and d.get("succeeded") is True:
            why = ("not attempted" if d.get("attempted") is False else
                   f"an error: {str(d['error'])[:120]}" if d.get("error") else None)
            if why:
                out.append(Item(f"succeeded with {why}", path, f"{where}.succeeded", "a succeeded drop its record "
                                "does not contradict", expected_given=True))
    handoff = doc.get("handoff") if isinstance(doc.get("handoff"), dict) else {}
    clear = handoff.get("cache_clear") if isinstance(handoff.get("cache_clear"), dict) else None
    if clear is not None:
        out += _clear(clear, handoff, enf.get("cache_drop"), path)
    return out


def _clear(clear: dict, handoff: dict, drop, path) -> list[Item]:
    out = []
    f = "handoff.cache_clear"

    def item(field, actual, expected):
        out.append(Item(actual, path, f"{f}.{field}", expected, expected_given=True))
    ok = clear.get("succeeded") is True
    if ok and clear.get("performed") is False:
        item("succeeded", "succeeded without being performed", "a clear that was performed")
    if ok and clear.get("error"):
        item("succeeded", f"succeeded with an error: {str(clear['error'])[:120]}", "no error")
    before, after = clear.get("resident_bytes_before"), clear.get("resident_bytes_after")
    per_client = handoff.get("checkpoint_bytes_per_client")
    if ok and is_number(before) and is_number(after) and after > before:
        item("resident_bytes_after", after, f"at most resident_bytes_before {before} (a clear evicts)")
    if ok and is_number(after) and is_number(per_client) and per_client > 0 and after > RESIDENT_FRACTION * per_client:
        item("resident_bytes_after", after, f"at most {RESIDENT_FRACTION:.0%} of the checkpoint per client "
                                            f"({per_client} bytes) after a succeeded clear")
    if isinstance(drop, dict) and isinstance(drop.get("succeeded"), bool) and isinstance(clear.get("succeeded"), bool) \
            and drop["succeeded"] != clear["succeeded"]:
        item("succeeded", clear["succeeded"], f"{drop['succeeded']} (enforcement.cache_drop.succeeded: the same clear)")
    for when in ("before", "after"):
        m = clear.get(f"meminfo_{when}_kib")
        if isinstance(m, dict) and is_number(m.get("Cached")) and is_number(m.get("MemTotal")) and m["Cached"] > m["MemTotal"]:
            item(f"meminfo_{when}_kib.Cached", m["Cached"], f"at most MemTotal {m['MemTotal']} KiB")
    return out
