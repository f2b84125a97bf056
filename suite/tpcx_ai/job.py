"""One stage of one use case, in its own process: `python -m suite.tpcx_ai.job --stage ...`.

    train  reads <data>/training, calls train(data, params, seed), saves the model file
    serve  loads the model, calls serve(model, data without labels, params), writes
           <output>/predictions.parquet
    score  serve on the labelled scoring split, plus truth(data) -> <output>/truth.parquet

A model file is a header line, a JSON line {sha256, bytes, use_case, module} and the pickled
model; a file whose payload does not match (truncated, corrupted) fails with a one-line error.
Every file is written under a temporary name and renamed. On failure the process prints one
line (`ucNN <stage>: ...`) on stderr, the traceback into --log, and exits 1.
"""

import argparse
import hashlib
import json
import os
import pickle
import signal
import sys
import traceback
from pathlib import Path

from suite.errors import RunError, expected_got

MAGIC = b"SUITE-TPCXAI-MODEL 1\n"
MAX_HEADER = 4096
STAGES = ("train", "serve", "score")


class ModelError(RunError):
    """A model file that is missing, truncated or corrupted."""


def save_model(model, path: Path, use_case: int, module: str) -> int:
    payload = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    header = {"sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload), "use_case": use_case,
              "module": module}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return len(payload)


def load_model(path: Path, use_case: int):
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"model file {path}: cannot read: {exc.strerror or exc} (run the training stage first)") from None
    if not data.startswith(MAGIC):
        raise ModelError(expected_got(f"model file {path}", "header", "a suite TPCx-AI model", "something else"))
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + MAX_HEADER)
    try:
        header = json.loads(data[len(MAGIC):end]) if end > 0 else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or not isinstance(header.get("bytes"), int) or "sha256" not in header:
        raise ModelError(expected_got(f"model file {path}", "header", "a JSON line with sha256 and bytes", "a broken one"))
    payload = data[end + 1:]
    if len(payload) != header["bytes"]:
        raise ModelError(expected_got(f"model file {path}", "size", f"{header['bytes']} bytes of model",
                                      f"{len(payload)} (truncated or corrupted)"))
    if hashlib.sha256(payload).hexdigest() != header["sha256"]:
        raise ModelError(expected_got(f"model file {path}", "sha256", header["sha256"][:16] + "...",
                                      "a different digest (corrupted)"))
    if header.get("use_case") != use_case:
        raise ModelError(expected_got(f"model file {path}", "use_case", use_case, header.get("use_case")))
    return pickle.loads(payload)


def write_frame(frame, path: Path) -> None:
    from suite.tpcx_ai.load import write_parquet
    import pyarrow as pa

    write_parquet(pa.Table.from_pandas(frame, preserve_index=False), Path(path))


def check_predictions(frame, keys, where: str) -> None:
    import pandas as pd

    want = list(keys) + ["prediction"]
    if not isinstance(frame, pd.DataFrame):
        raise RunError(expected_got(where, "serve()", "a pandas DataFrame", type(frame).__name__))
    if sorted(frame.columns) != sorted(want):
        raise RunError(expected_got(where, "serve() columns", want, list(frame.columns)))
    if frame.duplicated(list(keys)).any():
        raise RunError(expected_got(where, "serve() rows", "one per key", "duplicate keys"))


def run_stage(args) -> None:
    from suite.tpcx_ai import usecase
    from suite.tpcx_ai.load import ParquetData
    from suite.tpcx_ai.registry import import_object

    for p in args.path or []:
        if p not in sys.path:
            sys.path.insert(0, p)
    uc = usecase.load(Path(args.workload), args.use_case)
    module = import_object(args.module)
    where = f"uc{args.use_case:02d} {args.stage}"
    if args.stage == "train":
        model = module.train(ParquetData(args.data), dict(uc.params), args.seed)
        save_model(model, Path(args.model), args.use_case, args.module)
        return
    model = load_model(Path(args.model), args.use_case)
    pred = module.serve(model, ParquetData(args.data, hide_labels=True), dict(uc.params))
    check_predictions(pred, uc.keys, where)
    out = Path(args.output)
    write_frame(pred[list(uc.keys) + ["prediction"]], out / "predictions.parquet")
    if args.stage == "score":
        truth = module.truth(ParquetData(args.data))
        if truth is not None:
            write_frame(truth, out / "truth.parquet")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m suite.tpcx_ai.job", description="one stage of one TPCx-AI use case")
    p.add_argument("--stage", required=True, choices=STAGES)
    p.add_argument("--use-case", required=True, type=int)
    p.add_argument("--module", required=True, help="module (or module:object) with train, serve, truth")
    p.add_argument("--workload", required=True, help="the use case's YAML file")
    p.add_argument("--data", required=True, help="the split's parquet directory")
    p.add_argument("--model", required=True, help="the model file (written by train, read by serve/score)")
    p.add_argument("--output", help="directory for predictions.parquet (serve, score)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log", help="file for the traceback of a failure")
    p.add_argument("--path", action="append", help="extra import path (tests)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)   # stoppable even if started with SIGINT ignored
    where = f"uc{args.use_case:02d} {args.stage}"
    try:
        run_stage(args)
    except KeyboardInterrupt:
        print(f"{where}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        _log(args, traceback.format_exc())
        print(f"{where}: out of memory", file=sys.stderr)
        return 1
    except Exception as exc:   # noqa: BLE001 -- a use case's failure of any kind is one line and exit 1
        _log(args, traceback.format_exc())
        msg = str(exc).splitlines()[0] if str(exc) else ""
        print(f"{where}: {type(exc).__name__}: {msg}"[:400], file=sys.stderr)
        return 1
    return 0


def _log(args, text: str) -> None:
    if args.log:
        try:
            Path(args.log).parent.mkdir(parents=True, exist_ok=True)
            Path(args.log).write_text(text)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
