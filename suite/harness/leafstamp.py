"""The one leaf stamp: the YYYYMMDD_HHMMSS name of an MLPerf Storage v3.0 timestamp directory
(training/<model>/{datasize,datagen,run}/<stamp>/, checkpointing/<model>/<stamp>/,
kv_cache/<model>/run/<stamp>/, vector_database/<engine>/<INDEX>/{datagen,run}/<stamp>/) and of the
`<benchmark>_<stamp>_metadata.json` files inside them. Every writer and reader of such a name uses this
module; no other module spells the format or its pattern.

The clock is the one the rules name: Rules.md 2.1.13, 2.1.17 and 2.1.23 ("The timestamps should be
relative to the local timezone where the test was actually run"), which is what mlpstorage writes
(`datetime.now().strftime(...)`) and what the published leaves show (each name is its DLIO summary's
naive local `start`, less the seconds mlpstorage takes to launch DLIO). A stamp carries no zone, so a
reader cannot tell which clock made it and accepts both: a leaf an older suite wrote in UTC (training,
kv_cache, vector_database) or in local time (checkpointing) reads the same; `parse` gives the instant a
name means in the clock a caller names.

    stamp(t_unix_s)         -> "20260708_064613" (the rules' clock; clock="utc" for the other one)
    of(dt)                  -> the stamp of a wall-clock reading as it stands (a DLIO summary's start)
    is_stamp(name)          -> True for exactly the names `of` can make (a real date and time)
    parse(name, clock)      -> an aware datetime, or None for anything that is no stamp (never raises)
    PATTERN                 -> the regex text, to build into other names' regexes (metadata_re)
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from pathlib import Path

FORMAT = "%Y%m%d_%H%M%S"
PATTERN = r"[0-9]{8}_[0-9]{6}"         # ASCII digits only: \d would take any Unicode digit
LOCAL, UTC = "local", "utc"
CLOCKS = (LOCAL, UTC)
CLOCK = LOCAL                          # Rules.md 2.1.13 / 2.1.17 / 2.1.23: the local timezone
_RE = re.compile(PATTERN)
MAX_WAIT_S = 2.0                       # fresh(): how far ahead a newest leaf is waited for


def stamp(t_unix_s: float, clock: str = CLOCK) -> str:
    """The leaf name of the second `t_unix_s` falls in, read on `clock`."""
    _check(clock)
    return time.strftime(FORMAT, time.localtime(t_unix_s) if clock == LOCAL else time.gmtime(t_unix_s))


def now(clock: str = CLOCK) -> str:
    return stamp(time.time(), clock)


def of(dt: datetime) -> str:
    """The stamp of a wall-clock reading as it stands (its zone, if any, is not converted)."""
    return dt.strftime(FORMAT)


def _wall(name) -> datetime | None:
    if not isinstance(name, str) or len(name) != 15 or _RE.fullmatch(name) is None:
        return None
    try:
        dt = datetime.strptime(name, FORMAT)
    except ValueError:                 # 20261399_999999: the shape, not a date
        return None
    return dt if of(dt) == name else None


def is_stamp(name) -> bool:
    """A leaf's name: YYYYMMDD_HHMMSS of a real date and time, in either clock."""
    return _wall(name) is not None


def parse(name, clock: str = CLOCK) -> datetime | None:
    """The aware instant `name` means on `clock`; None for anything that is no stamp, and for a
    local reading the platform cannot place (a year outside what it converts)."""
    _check(clock)
    wall = _wall(name)
    if wall is None:
        return None
    if clock == UTC:
        return wall.replace(tzinfo=timezone.utc)
    try:
        return wall.astimezone()       # a naive reading taken as local time, with its offset
    except (ValueError, OverflowError, OSError):
        return None


def metadata_re(benchmark: str = "[a-z_]+") -> re.Pattern:
    """`<benchmark>_<stamp>_metadata.json` (benchmark: a name, or a regex alternation)."""
    return re.compile(rf"(?:{benchmark})_{PATTERN}_metadata\.json")


def fresh(parent: Path, clock: str = CLOCK) -> str:
    """A stamp no entry of `parent` has yet, later than every stamp there: waits for the next second
    while this one is taken or the newest is at most MAX_WAIT_S ahead (a leaf just made), so the leaves
    of one series sort in the order they were made. A newest further ahead (made on the other clock,
    or before the clock went back) is not waited for."""
    parent = Path(parent)
    while True:
        name = now(clock)
        taken = {p.name for p in parent.iterdir() if is_stamp(p.name)} if parent.is_dir() else set()
        newest = max(taken, default=None)
        if name not in taken and (newest is None or name > newest or _ahead_s(newest, name) > MAX_WAIT_S):
            return name
        time.sleep(1.0 - time.time() % 1.0 + 0.001)


def _ahead_s(later: str, name: str) -> float:
    return (_wall(later) - _wall(name)).total_seconds()


def _check(clock: str) -> None:
    if clock not in CLOCKS:
        raise ValueError(f"clock: expected one of {', '.join(CLOCKS)}, got {clock!r}")
