"""Break-even (issue 48): when reading a cached prefix from the storage tier beats recomputing it.

Recomputing a context of L tokens on the simulated accelerator (workloads/kv-cache.yaml, each model's
`prefill`, with its source): prefill_s(L) = L x s_per_token + L^2 x s_per_token_squared.

Reading it from storage, measured per option from its storage reads (the per-request records,
suite.kv_cache.requests: each read's bytes and device_s, the read's own service time, queueing left
out): a least-squares line read_s = fixed_s + s_per_byte x bytes over the reads (fixed_s: what a read
costs whatever its size, the open and the page drop; s_per_byte: the bandwidth's inverse). For a model
of B bytes per token, read_s(L) = fixed_s + L x B x s_per_byte: its storage read seconds per cached
token are B x s_per_byte. The mean beside it, sum(device_s) / sum(bytes) x B, counts each read's fixed
cost in (the miniature's entries are 1/256 of their size: there the fixed cost dominates both).

Reading wins where read_s(L) < prefill_s(L). The difference prefill - read = q L^2 + (p - B s) L - fixed
is convex and not positive at L = 0, so reading wins from one context length on (`from_tokens`) and
recomputing below it; where it never does up to MAX_CONTEXT, from_tokens is None. Every model of the
data file is shown against every option's measured storage (a storage's seconds per byte do not depend
on the model that wrote the bytes; the option's own model is marked)."""

from __future__ import annotations

import math

CONTEXTS = (512, 2048, 8192, 32768, 131072)
MAX_CONTEXT = 1 << 20          # 1,048,576 tokens: beyond any model here


def fit(reads: list[tuple[int, float]]) -> tuple[float, float]:
    """(fixed_s, s_per_byte) of read_s = fixed_s + s_per_byte x bytes over [(bytes, seconds)]; a
    negative intercept or slope falls back to the line through the origin (fixed_s 0)."""
    xs = [float(b) for b, _s in reads if b > 0]
    ys = [float(s) for b, s in reads if b > 0]
    if not xs:
        return 0.0, 0.0
    n, mx, my = len(xs), sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if n >= 2 and sxx > 0:
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
        fixed = my - slope * mx
        if slope > 0 and fixed >= 0:
            return fixed, slope
    return 0.0, sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)


def from_tokens(fixed_s: float, read_s_per_token: float, p: float, q: float) -> int | None:
    """The least context length L >= 1 at which reading (fixed_s + L x read_s_per_token) takes less
    than recomputing (p L + q L^2); None where it does not up to MAX_CONTEXT."""
    a, b, c = q, p - read_s_per_token, -fixed_s

    def wins(L: int) -> bool:
        return a * L * L + b * L + c > 0

    if wins(1):
        return 1
    if a > 0:
        root = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a) if b * b - 4 * a * c >= 0 else None
    else:
        root = (-c / b) if b > 0 else None
    if root is None or root > MAX_CONTEXT:
        return None
    L = max(1, int(math.floor(root)))
    while not wins(L) and L <= MAX_CONTEXT:
        L += 1
    return L if L <= MAX_CONTEXT else None


def bytes_per_token(m: dict) -> int:
    return m["layers"] * m["kv_heads"] * m["head_dim"] * 2 * m["dtype_bytes"]


def option(rows: list[tuple], doc: dict, own_model: str | None, divisor: int) -> dict:
    """One option's break-even for every model of `doc` (the workload), from its records' reads."""
    reads = [(r[3], r[5]) for r in rows if r[2] == "read" and r[3] > 0]
    fixed, per_byte = fit(reads)
    out = {"reads": len(reads), "read_fixed_s": fixed, "read_s_per_byte": per_byte, "token_bytes_divisor": divisor,
           "model": own_model, "models": {}}
    own = doc["models"].get(own_model) if own_model else None
    if own and reads:          # the mean cost of a token's worth of bytes as read, each read's fixed cost in it
        out["read_s_per_token_mean"] = sum(s for _b, s in reads) / sum(b for b, _s in reads) * bytes_per_token(own)
    if not reads:
        return out
    for name, m in sorted(doc["models"].items()):
        B, pre = bytes_per_token(m), m["prefill"]
        p, q = float(pre["s_per_token"]), float(pre["s_per_token_squared"])
        per_token = B * per_byte
        at = {str(L): {"read_s": fixed + L * per_token, "prefill_s": p * L + q * L * L} for L in CONTEXTS}
        for v in at.values():
            v["faster"] = "read" if v["read_s"] < v["prefill_s"] else "recompute"
        out["models"][name] = {"bytes_per_token": B, "prefill_s_per_token": p, "prefill_s_per_token_squared": q,
                               "accelerator": pre["accelerator"], "read_s_per_token": per_token,
                               "read_beats_recompute_from_tokens": from_tokens(fixed, per_token, p, q),
                               "at_context_tokens": at, "own_model": name == own_model}
    return out


def said(o: str, d: dict) -> list[str]:
    """Text lines of one option's break-even, one per model."""
    if not d["reads"]:
        return [f"  option {o}: no storage read recorded: no break-even"]
    rate = 1 / d["read_s_per_byte"] / 2**30 if d["read_s_per_byte"] else float("inf")
    lines = [f"  option {o} ({d['reads']} storage reads): a read takes {d['read_fixed_s'] * 1000:.3f} ms fixed + its "
             f"bytes at {rate:.3f} GiB/s"
             + (f"; mean {d['read_s_per_token_mean'] * 1e6:.2f} us per cached token of {d['model']}"
                if d.get("read_s_per_token_mean") is not None else "")]
    for name, m in d["models"].items():
        L = m["read_beats_recompute_from_tokens"]
        where = (f"reading beats recomputing from {L:,} tokens, recomputing is faster below" if L and L > 1 else
                 "reading beats recomputing at every context length" if L == 1 else
                 f"recomputing is faster at every context length up to {MAX_CONTEXT:,} tokens")
        at = m["at_context_tokens"][str(CONTEXTS[2])]
        lines.append(f"    {name}{' (this option)' if m['own_model'] else ''}: read {m['read_s_per_token'] * 1e6:.2f} us/token,"
                     f" prefill {m['prefill_s_per_token'] * 1e6:.2f} us/token (+ attention): {where} (at {CONTEXTS[2]:,}"
                     f" tokens: read {at['read_s']:.3f} s, recompute {at['prefill_s']:.3f} s)")
    return lines
