"""Object storage against the local S3 server (tools/s3-server.sh: versitygw on 127.0.0.1), ratios in one run.

    python benchmarks/s3.py [--files 48] [--record-mib 8] [--concurrency 4] [--repeat 3]

1. datagen: `suite datagen --data-dir s3://...` (unet3d npz, --processes C) bytes/s from its generation
   log, against a plain parallel PUT loop (C threads, boto3 upload_fileobj with boto3's defaults: multipart
   above 16 MiB, as our part size) of the same object sizes; and, as a reference only, the same loop with
   our client's request settings (no payload SHA-256 over http, no CRC32 header);
2. training read: `suite run --data-dir s3://... --param train.computation_time=0` with C/2 ranks x 2
   read threads (C GETs in flight) read bytes/s (bytes read / epoch time), against a plain parallel
   GET loop over the same objects at the same concurrency: boto3 with C threads, and s3dlio.get_many
   (max_in_flight=C) where s3dlio is installed; each loop after the page cache drop `suite run` makes
   before its epoch (the server is on this host: warm loops against a cold epoch were not a fair pair);
3. LIST requests per run with 1 and 8 ranks (results.json object_storage).
Each ratio is the median of --repeat back-to-back pairs (alternating which goes first).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))       # this checkout's suite (drop_caches), as the commands it starts
SCRIPT = REPO / "tools" / "s3-server.sh"


def sh(*argv, env=None, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True)
    if check and done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(map(str, argv[:4]))}: {done.stderr.strip()[-400:]}")
    return done


def suite(*args, env):
    return sh(sys.executable, "-m", "suite", *args, env=env)


def plain_put(client, bucket: str, sizes: list[int], conc: int) -> float:
    from boto3.s3.transfer import TransferConfig
    cfg = TransferConfig(multipart_threshold=16 << 20, multipart_chunksize=16 << 20, max_concurrency=1, use_threads=False)
    blob = os.urandom(max(sizes))

    def one(i):
        client.upload_fileobj(io.BytesIO(blob[:sizes[i]]), bucket, f"plain/put-{i}", Config=cfg)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(conc) as pool:
        list(pool.map(one, range(len(sizes))))
    return sum(sizes) / (time.perf_counter() - t0)


def drop_caches() -> bool:
    """What `suite run` does before each run (suite.enforce.cache: sync, then 3 to drop_caches): the plain
    GET loops read the server's files from the same cold page cache as the run's epoch, not warm."""
    from suite.enforce.cache import drop_caches as drop

    return drop().succeeded


def plain_get(client, bucket: str, keys: list[str], conc: int) -> float:
    drop_caches()

    def one(key):
        body = client.get_object(Bucket=bucket, Key=key)["Body"]
        n = 0
        while chunk := body.read(4 << 20):
            n += len(chunk)
        return n
    t0 = time.perf_counter()
    with ThreadPoolExecutor(conc) as pool:
        total = sum(pool.map(one, keys))
    return total / (time.perf_counter() - t0)


def s3dlio_get(bucket: str, keys: list[str], conc: int) -> float | None:
    try:
        import s3dlio
    except ImportError:
        return None
    drop_caches()
    t0 = time.perf_counter()
    got = s3dlio.get_many([f"s3://{bucket}/{k}" for k in keys], max_in_flight=conc)
    total = sum(len(memoryview(b[1] if isinstance(b, tuple) else b)) for b in got)
    return total / (time.perf_counter() - t0)


def suite_run(env, url: str, ranks: int, threads: int, res: Path, params: list[str]) -> dict:
    suite("run", "--workload", "unet3d", "--accelerators", ranks, "--data-dir", url, "--results-dir", res,
          "--division", "open", "--runs", "1", "--memory-limit", "1GiB", *params,
          "--param", "train.computation_time=0", "--param", f"reader.read_threads={threads}",
          "--param", "train.epochs=1", "--param", "reader.batch_size=1", env=env)
    doc = json.loads((res / "run-1" / "results.json").read_text())
    if doc["status"] != "complete":
        raise SystemExit(f"suite run: {doc['error']}")
    return doc


def main() -> int:
    """The options, the server, then each comparison in turn and its printed ratio: one straight script
    (66 lines) read top to bottom, as the other benchmarks' mains are."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=48)
    ap.add_argument("--record-mib", type=float, default=8.0)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import boto3

    with tempfile.TemporaryDirectory(prefix="suite-s3-bench-") as tmp:
        tmp = Path(tmp)
        sh("bash", SCRIPT, "start", "--dir", tmp / "srv", "--bucket", "bench")
        try:
            env = dict(os.environ, PYTHONPATH=str(REPO))
            env.update(l.split("=", 1) for l in (tmp / "srv" / "env").read_text().splitlines())
            os.environ.update(env)
            client = boto3.session.Session().client("s3")
            from botocore.config import Config    # a reference: the plain loop with our client's request settings
            unsigned = boto3.session.Session().client("s3", config=Config(
                s3={"payload_signing_enabled": False}, request_checksum_calculation="when_required"))
            rec = int(args.record_mib * 2**20)
            params = ["--param", f"dataset.record_length={rec}", "--param", "dataset.record_length_stdev=0"]
            c = args.concurrency
            gen, put, put_u, read, get, dl = [], [], [], [], [], []
            for k in range(args.repeat):
                url = f"s3://bench/d{k}"
                order = (0, 1) if k % 2 == 0 else (1, 0)
                for which in order:
                    if which == 0:
                        suite("datagen", "--workload", "unet3d", "--files", args.files, "--data-dir", url,
                              "--processes", c, *params, env=env)
                        log = json.loads((tmp / "srv" / "data" / "bench" / f"d{k}" / "generation_log.json").read_text())
                        gen.append(log["bytes_written"] / log["duration_s"])
                        sizes = [o["Size"] for o in client.list_objects_v2(Bucket="bench", Prefix=f"d{k}/train/")["Contents"]]
                    else:
                        put.append(plain_put(client, "bench", [rec + 1024] * args.files, c))
                        put_u.append(plain_put(unsigned, "bench", [rec + 1024] * args.files, c))
                keys = [o["Key"] for o in client.list_objects_v2(Bucket="bench", Prefix=f"d{k}/train/")["Contents"]]
                for which in order:
                    if which == 0:
                        doc = suite_run(env, url, c // 2 or 1, 2, tmp / f"r{k}", params)
                        secs = sum(e["duration_s"] for e in doc["epochs"])
                        read.append(doc["object_storage"]["requests"]["bytes_read"] / secs)
                    else:
                        get.append(plain_get(client, "bench", keys, c))
                        s = s3dlio_get("bench", keys, c)
                        if s:
                            dl.append(s)
            lists = {}
            for n in (1, 8):
                doc = suite_run(env, "s3://bench/d0", n, 1, tmp / f"list{n}", params)
                ev = doc["object_storage"]
                lists[n] = ev["list_requests_launcher"] + ev["list_requests_ranks"]
        finally:
            sh("bash", SCRIPT, "stop", "--dir", tmp / "srv", check=False)
    med = statistics.median
    mb = 1e6
    print(f"datagen {med(gen)/mb:.0f} MB/s vs plain PUT loop {med(put)/mb:.0f} MB/s: ratio {med(gen)/med(put):.2f} "
          f"(pairs: {', '.join(f'{g/p:.2f}' for g, p in zip(gen, put))})")
    print(f"  (a reference: the plain PUT loop with our client's settings, no payload SHA-256 and no CRC32, "
          f"{med(put_u)/mb:.0f} MB/s: datagen {med(gen)/med(put_u):.2f} of it)")
    best = max(med(get), med(dl)) if dl else med(get)
    print(f"training read {med(read)/mb:.0f} MB/s vs plain GET loop boto3 {med(get)/mb:.0f} MB/s"
          + (f", s3dlio {med(dl)/mb:.0f} MB/s" if dl else "") + f": ratio to the best {med(read)/best:.2f}")
    print(f"LIST requests per run: 1 rank {lists[1]}, 8 ranks {lists[8]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
