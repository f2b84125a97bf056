"""`suite run --workload tpcx-ai ...` and the TPCx-AI part of `suite list workloads`.

The tpcx-ai kind (suite/tpcx_ai/kind.py) adds these options to the `run` parser (add_run_arguments)
and hands a tpcx-ai run to `run(args)`; everything TPCx-AI about the command line lives here.
"""

import argparse
import math
from pathlib import Path

from suite.errors import SuiteError, expected_got
from suite.harness import resultsdir


def scale_factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 (about GB of data), got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def use_case_list(text: str) -> tuple[int, ...]:
    try:
        numbers = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected use cases like 1,3,8 (1..10), got {text!r}") from None
    bad = [n for n in numbers if not 1 <= n <= 10]
    if bad or len(set(numbers)) != len(numbers):
        raise argparse.ArgumentTypeError(f"expected distinct use cases among 1..10, got {text!r}")
    return numbers


def add_run_arguments(p) -> None:
    """The TPCx-AI options of `suite run` (ignored by the storage workloads)."""
    g = p.add_argument_group("TPCx-AI (--workload tpcx-ai)")
    g.add_argument("--scale-factor", type=scale_factor, help="about GB of data; >= 1 for a publishable AIUCpm")
    g.add_argument("--streams", type=int, default=2, help="throughput-test streams (>= 2 for AIUCpm; default 2)")
    g.add_argument("--use-cases", type=use_case_list, help="a subset such as 1,3,8 (no AIUCpm; default all ten)")
    g.add_argument("--processes", type=int, default=None, help="generator processes (default: the CPU count)")
    g.add_argument("--seed", type=int, default=0, help="data and training seed (default 0)")
    g.add_argument("--scheduler", metavar="ADDRESS", help="--engine dask: an existing scheduler such as "
                   "tcp://10.0.0.1:8786 (default: a LocalCluster of 2 worker processes)")


def engine(args) -> str:
    """--engine for tpcx-ai: local (this machine; the parser's default `suite` means local) or dask."""
    value = getattr(args, "engine", "suite")
    return "local" if value == "suite" else value


def run(args, registry=None, launcher: str = "exec") -> int:
    import os

    from suite import output
    from suite.tpcx_ai import driver
    from suite.tpcx_ai import leaf as result

    _validate(args)
    from suite.harness import provenance

    image = provenance.for_run()         # the code that runs, hashed before it runs
    with output.interruptible():         # SIGTERM from the claim on (reaching a dask cluster too): the claim is
        # given up or the result written marked incomplete, never left to block the dir
        results_dir = resultsdir.claim(args.results_dir, f"tpcx-ai-sf{args.scale_factor:g}")
        d = None
        try:
            data_dir = Path(args.data_dir) if args.data_dir else results_dir / "data"
            opts = driver.Options(scale_factor=args.scale_factor, data_dir=data_dir, results_dir=results_dir,
                                  streams=args.streams, use_cases=args.use_cases,
                                  processes=args.processes or os.cpu_count() or 1, seed=args.seed,
                                  launcher=launcher, engine=engine(args),
                                  scheduler=getattr(args, "scheduler", None), **({"registry": registry} if registry is not None else {}))
            d = driver.Driver(opts)          # bad input fails here, before anything is written
            d.connect()                      # --engine dask: the cluster reached (bounded), or refused
            r = None
        except KeyboardInterrupt:            # SIGTERM / Ctrl-C while reaching the cluster: marked interrupted
            if d is None:
                resultsdir.abandon(results_dir)
                raise
            r = d.interrupted("while reaching the dask scheduler")
        except BaseException:
            resultsdir.abandon(results_dir)
            raise
        try:
            r = d.execute() if r is None else r
            provenance.record(results_dir, image)     # .mlps-code-image and provenance.json, then the result
            doc = result.to_doc(r)
            doc["code_image"] = provenance.pointer(image)     # the code that ran, named by the result too
            path = result.write(results_dir, doc)
        finally:
            resultsdir.release(results_dir)
    print(summary(r, path))
    if r.fatal is not None:
        raise r.fatal
    if r.status == "interrupted":    # the CLI says so and exits 130; suite history records it interrupted
        raise KeyboardInterrupt
    if r.status != "complete":
        return 130
    from dataclasses import replace

    from suite.tpcx_ai import assess

    ok = not r.failed and all(q["passed"] and q.get("beats_constant", True) for q in r.quality.values())
    said = replace(assess.of_path(results_dir).voice(), failed=not ok)
    print(said.line())             # the last line: suite check's verdict line (suite.rules.verdict)
    return said.code


def _validate(args) -> None:
    """Bad input refused before anything is claimed or written (one line, exit 2)."""
    if args.scale_factor is None:
        raise SuiteError("--scale-factor: expected a number > 0 for --workload tpcx-ai, got none")
    if args.processes is not None and args.processes < 1:
        raise SuiteError(f"--processes: expected a positive number of generator processes, got {args.processes}")
    if not 0 <= args.seed < 2**32:
        raise SuiteError(f"--seed: expected an integer 0..2^32-1, got {args.seed}")
    if getattr(args, "scheduler", None) and engine(args) != "dask":
        raise SuiteError(f"--scheduler: expected only with --engine dask, got --engine {args.engine}")
    if args.results_dir:
        resultsdir.check(args.results_dir)
    if args.data_dir and Path(args.data_dir).exists() and not Path(args.data_dir).is_dir():
        raise SuiteError(expected_got(args.data_dir, "--data-dir", "a directory", "a file"))


def summary(r, path) -> str:
    from suite.tpcx_ai import naming

    lines = [f"tpcx-ai: {r.status}, SF {r.options.scale_factor:g}, {r.options.streams} streams, "
             f"use cases {','.join(map(str, sorted(r.use_cases)))}; wrote {path}"]
    for p in r.phases:
        shown = f"{p['duration_s']:.3f} s" if p["complete"] else "incomplete"
        lines.append(f"  {p['name']:<11} {shown}")
    if r.metric:
        m = r.metric
        subs = naming.records(r.use_cases)
        lines.append(f"  {naming.metric_name(m['scale_factor'], subs)} = {m['aiucpm']:.3f} (TLD {m['tld_s']:.3f} s, TPTT {m['tptt_s']:.3f} s, "
                     f"TPST {m['tpst_s']:.3f} s, TTT {m['ttt_s']:.3f} s)"
                     + ("" if m["publishable"] else "; not publishable (SF < 1)"))
        lines += [f"  {naming.substitutes_line(subs)}"] if subs else []
        lines.append(f"  {naming.LOAD_DIFFERS}")
    for reason in r.reasons:
        lines.append(f"  no AIUCpm: {reason}" if not r.metric else f"  note: {reason}")
    from suite.terminal import wrap

    return "\n".join(out for line in lines for out in wrap(line, hang=6))    # within 100 columns (issue 47)
