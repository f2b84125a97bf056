"""The tiered KV cache of one rank: GPU -> CPU -> storage, each with a capacity, LRU eviction that
demotes an entry to the next tier (a write there, then the old copy dropped), the terminal storage
tier deleting its least recently used files; no promotion on a read (the reference's one-way
waterfall). A tier of capacity 0 is skipped (closed options 1 and 3: every entry goes to storage).

Non-terminal tiers refuse an entry above 95 % of their capacity and evict down to 80 % (the
reference's thresholds). Every transfer is an `Op` in `ops` (eviction ones flagged): the figures
the reference reports leave eviction I/O out of the latencies, the suite's own include it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from suite.kv_cache.tier import Op

ADMIT_FRACTION = 0.95
TARGET_FRACTION = 0.80


class Cache:
    def __init__(self, tiers: list, capacities: dict, t0: float):
        """tiers: the tier objects, fastest first; capacities: tier name -> bytes (0: skipped)."""
        self.tiers = [t for t in tiers if capacities.get(t.name, 0) > 0]
        self.capacity = {t.name: capacities[t.name] for t in self.tiers}
        self.used = {t.name: 0 for t in self.tiers}
        self.lru: dict[str, OrderedDict] = {t.name: OrderedDict() for t in self.tiers}
        self.where: dict[str, str] = {}
        self.size: dict[str, int] = {}
        self.lock = threading.Lock()
        self.ops: list[Op] = []
        self.t0 = t0
        self.hits = self.misses = 0
        self.refused = 0
        self.pending: dict = {}      # user -> when its prefill write became due, while it waits for a slot

    def _record(self, kind, tier, nbytes, times, eviction, key, issued, ready) -> None:
        """One operation: issued and ready are perf_counter readings (its issue; when it became due)."""
        self.ops.append(Op(kind, tier, nbytes, times[0], times[1], time.perf_counter() - self.t0, eviction, key,
                           issued - self.t0, max(0.0, issued - ready)))

    def allocate(self, key: str, nbytes: int, chunk, ready: float | None = None) -> float | None:
        """Place a new entry, evicting as needed: the write's total_s (None: no tier can hold it). `ready`:
        when the write became due (before the caller waited for an allocation slot), else now."""
        return self._place(key, nbytes, 0, chunk, False, time.perf_counter() if ready is None else ready)

    def _place(self, key: str, nbytes: int, first: int, chunk, eviction: bool, ready: float) -> float | None:
        with self.lock:
            found = self._choose(key, nbytes, first)
            if found is None:
                self.refused += 1
                return None
            index, victims = found
        tier = self.tiers[index]
        self._evict(victims, index, chunk)
        issued = time.perf_counter()
        try:
            times = tier.write(key, nbytes, chunk)
        except BaseException:
            self._forget(key, tier.name)
            raise
        with self.lock:
            if key in self.lru[tier.name]:
                self.where[key] = tier.name
        self._record("evict_write" if eviction else "write", tier.name, nbytes, times, eviction, key, issued, ready)
        return times[0]

    def _choose(self, key: str, nbytes: int, first: int):
        """(tier index, [(victim key, bytes, tier index)]) with the space reserved; under the lock."""
        last = len(self.tiers) - 1
        for i in range(first, len(self.tiers)):
            name, cap = self.tiers[i].name, self.capacity[self.tiers[i].name]
            limit = cap if i == last else TARGET_FRACTION * cap
            if nbytes > (cap if i == last else ADMIT_FRACTION * cap):
                continue
            victims = []
            lru = self.lru[name]
            while self.used[name] + nbytes > limit and lru:
                vkey, vbytes = lru.popitem(last=False)
                self.used[name] -= vbytes
                victims.append((vkey, vbytes, i))
            if self.used[name] + nbytes > limit:
                continue
            self.used[name] += nbytes
            lru[key] = nbytes
            self.size[key] = nbytes
            return i, victims
        return None

    def _evict(self, victims: list, index: int, chunk) -> None:
        """Demote each victim to the next tier (terminal: delete its file); each due when the eviction began."""
        due = time.perf_counter()
        for vkey, vbytes, i in victims:
            tier = self.tiers[i]
            if i + 1 < len(self.tiers):
                self._place(vkey, vbytes, i + 1, chunk, True, due)
            else:
                with self.lock:
                    if self.where.get(vkey) == tier.name:
                        del self.where[vkey]
                issued = time.perf_counter()
                took = tier.delete(vkey)
                self._record("delete", tier.name, 0, (took, took), True, vkey, issued, due)

    def _forget(self, key: str, name: str) -> None:
        with self.lock:
            if self.lru[name].pop(key, None) is not None:
                self.used[name] -= self.size.get(key, 0) or 0
            self.where.pop(key, None)

    def read(self, key: str) -> float | None:
        """Read the entry whole from its tier: total_s, or None on a miss (never written, or evicted)."""
        ready = time.perf_counter()
        with self.lock:
            name = self.where.get(key)
            if name is None:
                self.misses += 1
                return None
            if key in self.lru[name]:
                self.lru[name].move_to_end(key)
            nbytes = self.size[key]
        tier = next(t for t in self.tiers if t.name == name)
        issued = time.perf_counter()
        try:
            times = tier.read(key, nbytes)
        except FileNotFoundError:
            with self.lock:
                self.misses += 1
            return None
        with self.lock:
            self.hits += 1
        self._record("read", name, nbytes, times, False, key, issued, ready)
        return times[0]

    def occupancy(self) -> dict:
        with self.lock:
            return {name: {"bytes": self.used[name], "entries": len(self.lru[name])} for name in self.used}
