"""One rank's simulated inference users (the reference's workload, kv_cache/workload.py and
benchmark.py, in facts): each user a thread with its type's context and generation lengths and think
time, multi-turn conversations, and per request:

1. with probability system_prompt_probability a system-prompt entry is looked up (a miss: nobody
   writes one) and its 5-9 tokens come off the context;
2. from turn 2 on, every earlier turn's entry of the conversation is read;
3. prefill writes one entry of the context's tokens (at most max_concurrent_allocs at a time);
4. decode (contexts below prefill_only_from_tokens) reads that entry once, then once per
   decode_batch_tokens generated tokens;
5. generation mode none: no sleep. The request's storage latency is the sum of its operations.

Each user processes its own requests (queue wait = waiting for an allocation slot). A trial stops
after its duration: operations in flight stop at their next chunk and are not counted.
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass, field

from suite.kv_cache.tier import WRITE_CHUNK, Stopped

PRIORITY = {"interactive": 3, "responsive": 2, "batch": 1}
SAMPLE_EVERY_S = 0.5
MAX_SAMPLES = 3600


@dataclass
class Record:
    e2e_s: float
    storage_s: float
    tokens: int
    context: int
    phase: str
    priority: int
    prefill_s: float
    decode_s: float
    done_at_s: float


@dataclass
class Run:
    records: list = field(default_factory=list)
    timeline: list = field(default_factory=list)
    elapsed_s: float = 0.0
    users: int = 0
    queued_at_end_s: list = field(default_factory=list)     # the waits of prefill writes never issued


def user_type(doc: dict, rng: random.Random) -> tuple[str, dict]:
    name = rng.choice(sorted(doc["user_types"]))
    return name, doc["user_types"][name]


def priority(doc: dict, rng: random.Random) -> int:
    x, p = rng.random(), doc["request"]["priorities"]
    return 3 if x < p["interactive"] else 2 if x < p["responsive"] else 1


def user(uid: int, doc: dict, params, cache, sem, entry_bytes, t0: float, stop: threading.Event, out: list,
         seed: int) -> None:
    """One user's loop until `stop` (a thread). Function of ~50 lines: the request's five steps in order."""
    import numpy as np

    rng = random.Random(seed * 100003 + uid)
    kind, t = user_type(doc, rng)
    req = doc["request"]
    ctx_max = rng.randint(*map(int, t["context_tokens"]))
    gen_max = rng.randint(*map(int, t["generate_tokens"]))
    think = rng.uniform(*t["think_s"])
    prio = priority(doc, rng)
    chunk = np.empty(WRITE_CHUNK, dtype=np.uint8)
    conv, turn, earlier = None, 0, []
    while not stop.is_set():
        if stop.wait(think * rng.uniform(0.8, 1.2)):
            return
        if conv is None or turn >= req["max_turns"] or rng.random() < req["conversation_end_probability"]:
            conv, turn, earlier = f"conv_{uid}_{int(time.time() * 1000)}", 0, []
        turn += 1
        context = rng.randint(max(1, ctx_max // 4), ctx_max)
        generate = rng.randint(max(1, gen_max // 4), gen_max)
        start = time.perf_counter()
        storage = prefill = decode = 0.0
        try:
            if rng.random() < req["system_prompt_probability"]:
                got = cache.read(f"kv_system_{rng.randrange(3)}")
                storage += got or 0.0
                context = max(1, context - rng.randint(5, 9))
            for key in earlier:
                storage += cache.read(key) or 0.0
            key = f"{conv}_turn_{turn}"
            due = time.perf_counter()           # the write's queueing starts here: the allocation slot
            cache.pending[uid] = due
            with sem:
                cache.pending.pop(uid, None)
                wrote = cache.allocate(key, entry_bytes(context), chunk, due)
            prefill = wrote or 0.0
            storage += prefill
            phase = "prefill" if context >= req["prefill_only_from_tokens"] else "prefill_decode"
            if phase == "prefill_decode" and wrote is not None:
                for _ in range(1 + math.ceil(generate / req["decode_batch_tokens"])):
                    decode += cache.read(key) or 0.0
                storage += decode
        except Stopped:
            return
        if stop.is_set():
            return                      # finished after the end: not counted, as the reference's cut-off
        if wrote is not None:
            earlier.append(key)
        now = time.perf_counter()
        out.append(Record(now - start, storage, generate, context, phase, prio, prefill, decode, now - t0))


def sampler(cache, t0: float, stop: threading.Event, timeline: list) -> None:
    """Tier occupancy every SAMPLE_EVERY_S (the report's occupancy-over-time plot)."""
    while len(timeline) < MAX_SAMPLES:
        timeline.append({"t_s": round(time.perf_counter() - t0, 3), **{
            f"{name}_{what}": v for name, occ in cache.occupancy().items() for what, v in occ.items()}})
        if stop.wait(SAMPLE_EVERY_S):
            break


def run(doc: dict, params, cache, entry_bytes, t0: float, stop: threading.Event, seed: int) -> Run:
    """All users for params.duration_s; the records of completed requests, the timeline, the wall time.
    A user's error (ENOSPC in the cache dir) stops the trial and is raised: never a trial of 0 tokens/s."""
    out, timeline, errors = [], [], []
    sem = threading.BoundedSemaphore(max(1, params.max_concurrent_allocs))

    def guarded(*args) -> None:
        try:
            user(*args)
        except BaseException as exc:    # noqa: BLE001 - an I/O error (ENOSPC) in any user fails the rank
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=guarded, daemon=True, name=f"user-{u}",
                                args=(u, doc, params, cache, sem, entry_bytes, t0, stop, out, seed))
               for u in range(params.users)]
    threads.append(threading.Thread(target=sampler, args=(cache, t0, stop, timeline), daemon=True))
    for th in threads:
        th.start()
    stop.wait(params.duration_s)
    stop.set()
    end = time.perf_counter()
    queued = [end - due for due in list(cache.pending.values())]   # still waiting for a slot: never issued
    elapsed = end - t0
    for th in threads:
        th.join(timeout=30)
    if errors:
        raise errors[0]                 # the trial failed: its figures are not a result
    return Run(out, timeline, elapsed, params.users, queued)
