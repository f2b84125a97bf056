"""A small table group and two small use cases for the driver's tests (not the real TPCx-AI ones).

GROUP "toy": toy_points (chunked; features x, y, a category, a PGM-like blob one file per row,
labels `label` and `target`) and toy_dim (a dimension table made whole by chunk 0).
Use cases: `classify` (label = x + y > 0, learned as a threshold on x + y) and `regress`
(target = 3x - 2y + 5 + noise, least squares). Both are numpy/pandas only and fast. Faults for
tests come from params: {fail: raise|kill, fail_stage: train|serve}.
"""

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from suite.tpcx_ai import spec

HERE = Path(__file__).resolve().parent
CHUNK = 250
LABEL = {b"label": b"1"}


def schemas():
    return {
        "toy_points": pa.schema([
            pa.field("p_id", pa.int64()), pa.field("x", pa.float64()), pa.field("y", pa.float64()),
            pa.field("cat", pa.string()), pa.field("blob", pa.binary(), metadata={b"ext": b"pgm"}),
            pa.field("label", pa.int64(), metadata=LABEL), pa.field("target", pa.float64(), metadata=LABEL)]),
        "toy_dim": pa.schema([pa.field("cat", pa.string()), pa.field("weight", pa.float64())]),
    }


def rows(sf, split):
    return spec.split_rows(max(400.0, 20000.0 * sf), split, minimum=100)


def chunks(sf, split):
    return -(-rows(sf, split) // CHUNK)


def generate(sf, split, seed, chunk):
    n_all = rows(sf, split)
    lo, hi = chunk * CHUNK, min(n_all, (chunk + 1) * CHUNK)
    n = hi - lo
    r = spec.rng(seed, "toy", split, "chunk", chunk)
    x, y = r.normal(size=n), r.normal(size=n)
    cat = np.array(["a", "b", "c"])[r.integers(0, 3, n)]
    noise = r.normal(scale=0.3, size=n)
    label = (x + y + noise > 0).astype(np.int64)
    target = 3 * x - 2 * y + 5 + noise
    blob = [b"P5 2 1 255\n" + bytes(r.integers(0, 256, 2, dtype=np.uint8)) for _ in range(min(n, 3))] + [None] * (n - min(n, 3))
    offset = {"training": 0, "serving": 10**8, "scoring": 2 * 10**8}[split]
    out = {"toy_points": pa.table({"p_id": np.arange(lo, hi, dtype=np.int64) + offset, "x": x, "y": y, "cat": cat,
                                   "blob": pa.array(blob, pa.binary()), "label": label, "target": target})}
    if chunk == 0:
        out["toy_dim"] = pa.table({"cat": ["a", "b", "c"], "weight": [1.0, 2.0, 0.5]})
    return out


def table_rows(sf, split):
    return {"toy_points": rows(sf, split), "toy_dim": 3}


GROUP = spec.TableGroup("toy", schemas, chunks, generate, "driver test data", rows=table_rows)


# --------------------------------------------------------------------------- use cases


def _maybe_fail(params, stage):
    if params.get("fail") and params.get("fail_stage", "train") == stage:
        if params["fail"] == "kill":       # what the kernel's OOM killer does
            os.kill(os.getpid(), signal.SIGKILL)
        if params["fail"] == "sleep":
            import time
            time.sleep(60)
        raise ValueError("toy use case asked to fail")


class Classify:
    @staticmethod
    def train(data, params, seed):
        _maybe_fail(params, "train")
        t = data.table("toy_points", ["x", "y", "label"])
        s = (t.x + t.y).to_numpy()
        cands = np.quantile(s, np.linspace(0.05, 0.95, 91))
        acc = [((s > c) == t.label.to_numpy()).mean() for c in cands]
        return {"cut": float(cands[int(np.argmax(acc))])}

    @staticmethod
    def serve(model, data, params):
        _maybe_fail(params, "serve")
        t = data.table("toy_points", ["p_id", "x", "y"])
        if "label" in data.arrow("toy_points").column_names:
            raise AssertionError("label visible in serve")
        return t.assign(prediction=((t.x + t.y) > model["cut"]).astype(np.int64))[["p_id", "prediction"]]

    @staticmethod
    def truth(data):
        return data.table("toy_points", ["p_id", "label"])


class Regress:
    @staticmethod
    def train(data, params, seed):
        _maybe_fail(params, "train")
        t = data.table("toy_points", ["x", "y", "target"])
        a = np.column_stack([t.x, t.y, np.ones(len(t))])
        return np.linalg.lstsq(a, t.target.to_numpy(), rcond=None)[0]

    @staticmethod
    def serve(model, data, params):
        _maybe_fail(params, "serve")
        t = data.table("toy_points", ["p_id", "x", "y"])
        return t.assign(prediction=np.column_stack([t.x, t.y, np.ones(len(t))]) @ model)[["p_id", "prediction"]]

    @staticmethod
    def truth(data):
        return data.table("toy_points", ["p_id", "target"]).rename(columns={"target": "label"})


# --------------------------------------------------------------------------- definitions


def usecase_yaml(n: int, kind: str, params=None) -> str:
    metric, direction = ("accuracy_score", "higher") if kind == "classify" else ("mean_squared_log_error", "lower")
    return (f"schema_version: 1\nuse_case: {n}\nname: toy-{kind}-{n}\ntask: toy {kind}\n"
            f"tables: [toy_points]\nkeys: [p_id]\nalgorithm: toy {kind}\nreference_algorithm: none\n"
            f"differs: toy\nparams: {dict(params or {})!r}\nmetric: {metric}\ndirection: {direction}\n")


def thresholds_yaml(use_cases, strict=()) -> str:
    lines = ["schema_version: 1", "description: toy thresholds", "params:", "  thresholds:"]
    for n in use_cases:
        metric, op, value = ("accuracy_score", "min", 0.8) if n % 2 else ("mean_squared_log_error", "max", 0.05)
        if n in strict:   # unreachable: the quality check fails
            value = 1.01 if op == "min" else 0.0
        lines += [f"    - {{id: tpcxai-uc{n:02d}-quality, use_case: {n}, metric: {metric}, op: {op}, value: {value},",
                  "       source: toy}"]
    return "\n".join(lines + ["rules: []", ""])


def registry(tmp: Path, faults=None, use_cases=range(1, 11), strict=()):
    """A Registry of toy use cases (odd: classify, even: regress) with YAML files under tmp."""
    import shutil

    from suite.tpcx_ai.registry import Registry, rules_dir

    wl, rules = Path(tmp) / "toy-workloads", Path(tmp) / "toy-rules"
    wl.mkdir(parents=True, exist_ok=True)
    rules.mkdir(parents=True, exist_ok=True)
    mods = []
    for n in use_cases:
        kind = "classify" if n % 2 else "regress"
        (wl / f"uc{n:02d}.yaml").write_text(usecase_yaml(n, kind, (faults or {}).get(n)))
        mods.append((n, f"tpcx_toy:{kind.capitalize()}"))
    (rules / "thresholds.yaml").write_text(thresholds_yaml(use_cases, strict))
    shutil.copy(rules_dir() / "streams.yaml", rules / "streams.yaml")
    return Registry(group_modules=("tpcx_toy",), usecase_modules=tuple(mods), workloads=str(wl), rules=str(rules),
                    paths=(str(HERE),))


def main(argv=None) -> int:
    """`python tpcx_toy.py TMP [--fault UC=KIND] [--dask-call-timeout S] [--progress-every S]
    suite-run-arguments...`: `suite run --workload tpcx-ai` over the toy
    registry (what suite.cli does, with the toy use cases and the fork launcher)."""
    from suite import cli
    from suite.errors import SuiteError
    from suite.tpcx_ai import run as command

    argv = list(sys.argv[1:] if argv is None else argv)
    tmp = Path(argv.pop(0))
    faults = {}
    while argv and argv[0] == "--fault":
        n, kind = argv[1].split("=")
        faults[int(n)] = {"fail": kind}
        argv = argv[2:]
    if argv and argv[0] == "--dask-call-timeout":      # a shorter watchdog on the scheduler's calls (tests)
        from suite.tpcx_ai import engine_dask

        engine_dask.CALL_TIMEOUT_S = float(argv[1])
        argv = argv[2:]
    if argv and argv[0] == "--progress-every":         # the live progress line's period off a TTY (tests)
        from suite.tpcx_ai import driver

        driver.LIVE_EVERY_S = float(argv[1])
        argv = argv[2:]
    args = cli.build_parser().parse_args(["run", "--workload", "tpcx-ai", *argv])
    use_cases = args.use_cases or range(1, 11)
    try:
        return int(command.run(args, registry=registry(tmp, faults, use_cases), launcher="fork"))
    except SuiteError as exc:
        print(f"suite run: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
