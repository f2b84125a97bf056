"""What a run records of the machine it ran on, for every kind alike: the host (hostname, CPUs,
memory, kernel) and the versions (suite, Python). `suite compare` shows them as its systems and
`suite history` fingerprints them (a change of kernel or suite version starts a new series), so a
kind that records them here is described as training's runs are (`host.*`, `versions.*`)."""

from __future__ import annotations

import os
import socket
import sys


def host() -> dict:
    """This host as a result records it (training's results.json `host`)."""
    from suite.enforce.cache import meminfo_bytes

    return {"hostname": socket.gethostname(), "cpu_count": os.cpu_count(), "mem_total_bytes": meminfo_bytes("MemTotal") or 0,
            "kernel": os.uname().release}


def versions() -> dict:
    """The suite and Python that ran (training adds its MPI)."""
    from suite import __version__

    return {"suite": __version__, "python": sys.version.split()[0]}


def system(doc) -> dict:
    """A result document's `host` and `versions` as a system description's flat keys (host.hostname,
    versions.suite ...), the way suite.training.compared shows ours; only text and numbers, shortened."""
    out = {}
    for block in ("host", "versions"):
        said = doc.get(block) if isinstance(doc, dict) else None
        if isinstance(said, dict):
            out.update({f"{block}.{k}": str(v)[:120] for k, v in said.items()
                        if isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)})
    return out
