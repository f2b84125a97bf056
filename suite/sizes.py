"""Byte sizes with units: "128GiB" is 128 x 1024^3, "137.4GB" is 137.4 x 1000^3.

A bare number is refused, so GiB and GB are never confused.
"""

import re
from decimal import Decimal

from suite.errors import SuiteError

UNITS = {
    "B": 1,
    "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4, "PB": 1000**5,
    "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "PiB": 1024**5,
}
GIB = 1024**3
MIB = 1024**2

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]i?B|B)\s*$", re.ASCII)
MAX_BYTES = 1 << 60  # 1 EiB: beyond any host's memory or any data set a run can write


def parse_size(text: str) -> int:
    """Return the number of bytes in `text`; raise SuiteError when it has no unit."""
    match = _SIZE.match(str(text))
    if not match or match.group(2) not in UNITS:
        raise SuiteError(
            f"size {text!r}: expected a number with a unit, e.g. 128GiB (x1024^3) or "
            f"137.4GB (x1000^3); units: {', '.join(UNITS)}"
        )
    number = match.group(1)
    if len(number) > 40:  # no float overflow, no 400-digit arithmetic
        raise SuiteError(f"size {str(text)[:24]!r}...: expected at most 1 EiB, got a {len(number)}-digit number")
    value = int(Decimal(number) * UNITS[match.group(2)])
    if value <= 0:
        raise SuiteError(f"size {text!r}: expected a positive size, got {value} bytes")
    if value > MAX_BYTES:
        raise SuiteError(f"size {text!r}: expected at most 1 EiB ({MAX_BYTES} B), got {value} B")
    return value


def gib_hint(text: str) -> str | None:
    """A note for a size typed in GB whose number reads like a GiB memory size ("256GB": a power of two or
    a multiple of 64 GB, as memory is sold and as `free -g` and mlpstorage's --client-host-memory-in-gb
    count it): which unit suite took, and how to type the other. None for any other size."""
    match = _SIZE.match(str(text))
    if not match or match.group(2) != "GB" or "." in match.group(1) or len(match.group(1)) > 7:
        return None
    n = int(match.group(1))
    if n < 8 or not (n & (n - 1) == 0 or n % 64 == 0):
        return None
    return (f"{n}GB is {n} x 10^9 B = {n * UNITS['GB'] / GIB:.2f} GiB (suite's GB is 10^9 B, GiB 2^30 B); "
            f"{n} GiB of host memory (as `free -g` and mlpstorage's --client-host-memory-in-gb count it) is {n}GiB")
