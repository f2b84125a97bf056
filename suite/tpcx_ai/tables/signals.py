"""The signals table group: conversation_audio, customer_images, failures, financial_account,
financial_transactions (UC02, UC09, UC06, UC10).

Row counts follow `spec.row_drivers` (training) and `spec.split_rows` (serving, scoring), with
these minimums so that a tiny SF (0.01) still trains and scores meaningfully:

  table                   training minimum           serving / scoring minimum
  financial_account       200 accounts               50 accounts
  financial_transactions  20 000                     4 000
  failures                200 disks x 30 days        1800 disks x 1 snapshot
  customer_images         10 identities, 5 each      3 images per identity
  conversation_audio      100 clips (the kit's)      40 clips

Mechanisms (shared by all splits, so a model trained on one predicts the others):
- fraud: a transaction is fraud or not first (prior 12 %; 50 % in the scoring split, which
  over-represents positives as the kit's scoring data does), then its amount-to-limit ratio and
  hour of day are drawn from the class's distribution: fraud moves large shares of the account's
  limit, mostly at night; both distributions overlap (noise). `transaction_limit` is per account.
- failures: in training each disk reports SMART raw counters (smart_5/10/184/187/188/197/198)
  once a day for `days` consecutive days; 8 % of disks fail (50 % in scoring), drawn from the
  chunk's stream, on their last day (`failure` = 1 that day, as Backblaze data); a healthy disk's
  series ends on the collection's last day, common to all. Serving and scoring hold one daily
  snapshot per disk (a failing disk's on its failure day) at a random date, so neither a row's
  place in its disk's series, its date nor its serial number tells its label (tests). Before failing, some of a disk's counters ramp up
  exponentially over its last one to three days (mostly one); every disk may carry background
  counts and slow drift, and a fifth of failing disks degrade only weakly (noise).
- images and audio: see `signals_media` (vocabulary pronunciations and face prototypes come
  from the population stream `spec.rng(seed, "signals", "population", ...)`).
Not generated: the kit's IBAN column of transactions (an unused string; 7 M of them per SF 1).
"""

import math

from suite.tpcx_ai import spec
from suite.tpcx_ai.tables import signals_media as media

NAME = "signals"
TX_CHUNK = spec.CHUNK_ROWS
AUDIO_CHUNK = 32
IMAGE_CHUNK = 256
FRAUD_PRIOR = {"training": 0.12, "serving": 0.12, "scoring": 0.5}
FAIL_SHARE = {"training": 0.08, "serving": 0.08, "scoring": 0.5}
SMART = ("smart_5_raw", "smart_10_raw", "smart_184_raw", "smart_187_raw", "smart_188_raw",
         "smart_197_raw", "smart_198_raw")
_SMART_SCALE = (8.0, 1.0, 1.0, 2.0, 5.0, 3.0, 3.0)
_MODELS = (("ST4000DM000", 4_000_787_030_016), ("ST12000NM0007", 12_000_138_625_024),
           ("HGST HMS5C4040BLE640", 4_000_787_030_016), ("TOSHIBA MG07ACA14TA", 14_000_519_643_136))
_EPOCH_DAY = 17897  # 2019-01-01 in days since 1970-01-01
_EPOCH_S = _EPOCH_DAY * 86400


def _count(full: float, split: str, train_min: int, other_min: int) -> int:
    return spec.split_rows(full, split, train_min if split == "training" else other_min)


def plan(sf: float, split: str) -> dict:
    """Row counts and chunk sizes of each table: a function of (sf, split) only."""
    d = spec.row_drivers(sf)
    identities = int(math.ceil(d["face_identities"]))
    # training: a daily series per disk (UC06 trains on failing drives' last days); serving and
    # scoring: one snapshot per disk, so no row's position in its disk's series tells its label
    days = max(30, int(round(d["failure_samples_per_disk"]))) if split == "training" else 1
    p = {
        "accounts": _count(d["financial_accounts"], split, 200, 50),
        "transactions": _count(d["financial_transactions"], split, 20_000, 4_000),
        "disks": _count(d["disks"], split, 200, 60) if split == "training"
        else _count(d["failures"], split, 1, 1800),
        "days": days,
        "disks_per_chunk": max(1, TX_CHUNK // days),
        "weeks": int(d["weeks"]),
        "identities": identities,
        "images": max(_count(d["face_images"], split, 1, 1), identities * (5 if split == "training" else 3)),
        "clips": _count(d["audio_clips"], split, 100, 40),
    }
    p["chunks"] = {
        "financial_transactions": -(-p["transactions"] // TX_CHUNK),
        "failures": -(-p["disks"] // p["disks_per_chunk"]),
        "customer_images": -(-p["images"] // IMAGE_CHUNK),
        "conversation_audio": -(-p["clips"] // AUDIO_CHUNK),
        "financial_account": 1,
    }
    return p


def chunks(sf: float, split: str) -> int:
    return max(plan(sf, split)["chunks"].values())


def table_rows(sf: float, split: str) -> dict[str, int]:
    """Every table's row count, as the plan fixes it."""
    p = plan(sf, split)
    return {"financial_account": p["accounts"], "financial_transactions": p["transactions"],
            "failures": p["disks"] * p["days"], "customer_images": p["images"], "conversation_audio": p["clips"]}


def schemas() -> dict:
    import pyarrow as pa

    label = {b"label": b"1"}
    return {
        "financial_account": pa.schema([("fa_customer_sk", pa.int64()), ("transaction_limit", pa.float64())]),
        "financial_transactions": pa.schema([
            ("transaction_id", pa.int64()), ("sender_id", pa.int64()), ("receiver_id", pa.int64()),
            ("amount", pa.float64()), ("transaction_time", pa.timestamp("s")),
            pa.field("is_fraud", pa.int8(), metadata=label)]),
        "failures": pa.schema([
            ("date", pa.date32()), ("serial_number", pa.string()), ("model", pa.string()),
            ("capacity_bytes", pa.int64()), pa.field("failure", pa.int8(), metadata=label)]
            + [(c, pa.int64()) for c in SMART]),
        "customer_images": pa.schema([
            ("image_id", pa.int64()), ("img_filename", pa.string()),
            pa.field("image", pa.binary(), metadata={b"ext": b"pgm"}),
            pa.field("identity", pa.int64(), metadata=label)]),
        "conversation_audio": pa.schema([
            ("clip_id", pa.int64()), ("wav_filename", pa.string()), ("wav_filesize", pa.int64()),
            pa.field("audio", pa.binary(), metadata={b"ext": b"wav"}),
            pa.field("transcript", pa.string(), metadata=label)]),
    }


def accounts(p: dict, split: str, seed: int):
    """(ids, limits) of the split's accounts (made by chunk 0's stream, re-derived anywhere)."""
    import numpy as np

    g = spec.rng(seed, NAME, split, "chunk", 0, "financial_account")
    n = p["accounts"]
    limits = np.round(g.lognormal(math.log(3000.0), 0.6, n) / 100.0) * 100.0 + 100.0
    return np.arange(n, dtype=np.int64), limits


def transactions(p: dict, split: str, seed: int, chunk: int) -> dict:
    """Columns of one chunk of financial_transactions (vectorised)."""
    import numpy as np

    first = chunk * TX_CHUNK
    n = min(TX_CHUNK, p["transactions"] - first)
    g = spec.rng(seed, NAME, split, "chunk", chunk, "financial_transactions")
    _, limits = accounts(p, split, seed)
    fraud = g.random(n) < FRAUD_PRIOR[split]
    sender = g.integers(0, len(limits), n)
    ratio = np.where(fraud, g.lognormal(math.log(0.75), 0.45, n), g.lognormal(math.log(0.12), 0.8, n))
    amount = np.round(np.minimum(ratio, 3.0) * limits[sender], 2)
    night = g.random(n) < np.where(fraud, 0.65, 0.08)
    hour = np.where(night, g.integers(0, 6, n), g.integers(6, 24, n))
    noisy = g.random(n) < 0.15  # hours anywhere in the day
    hour = np.where(noisy, g.integers(0, 24, n), hour)
    t = _EPOCH_S + g.integers(0, p["weeks"] * 7, n) * 86400 + hour * 3600 + g.integers(0, 3600, n)
    return {"transaction_id": np.arange(first, first + n, dtype=np.int64), "sender_id": sender,
            "receiver_id": g.integers(0, len(limits), n), "amount": amount,
            "transaction_time": t.astype("datetime64[s]"), "is_fraud": fraud.astype(np.int8)}


def failures(p: dict, split: str, seed: int, chunk: int) -> dict:
    """Columns of one chunk of failures: disks_per_chunk disks x days rows (vectorised)."""
    import numpy as np
    import pyarrow as pa

    first = chunk * p["disks_per_chunk"]
    nd, days = min(p["disks_per_chunk"], p["disks"] - first), p["days"]
    g = spec.rng(seed, NAME, split, "chunk", chunk, "failures")
    disk = np.arange(first, first + nd)
    fails = g.random(nd) < FAIL_SHARE[split]  # from the chunk's stream: no formula of the serial
    model = g.integers(0, len(_MODELS), nd)
    # every series ends on the collection's last day, a failing disk's on its failure day
    end = _EPOCH_DAY + 364 + days - np.where(fails | (days == 1), g.integers(0, 365, nd), 0)
    start = end - (days - 1)
    row_disk = np.repeat(np.arange(nd), days)
    t = np.tile(np.arange(days), nd)
    to_end = (days - 1 - t).astype(np.float64)
    smart = _smart_counters(g, fails, row_disk, t, to_end)
    prefix = split[:2].upper()
    serials = pa.array([f"Z{prefix}{i:07d}" for i in disk]).take(pa.array(row_disk))
    return {
        "date": (start[row_disk] + t).astype("datetime64[D]"),
        "serial_number": serials,
        "model": pa.array([m for m, _ in _MODELS]).take(pa.array(model[row_disk])),
        "capacity_bytes": np.array([c for _, c in _MODELS], dtype=np.int64)[model[row_disk]],
        "failure": (fails[row_disk] & (to_end == 0)).astype(np.int8),
        **{c: smart[:, k] for k, c in enumerate(SMART)},
    }


def _smart_counters(g, fails, row_disk, t, to_end):
    """(rows, 7) int64 raw counters: background + drift, plus the ramp before a failure."""
    import numpy as np

    nd, k = len(fails), len(SMART)
    scale = np.array(_SMART_SCALE)
    base = (g.random((nd, k)) < 0.1) * np.floor(g.lognormal(1.0, 1.2, (nd, k))) * scale
    drift = (g.random((nd, k)) < 0.1) * g.uniform(0.0, 0.05, (nd, k)) * scale
    involved = g.random((nd, k)) < 0.5
    involved[np.arange(nd), g.integers(0, k, nd)] = True
    strength = np.where(g.random(nd) < 0.2, 0.25, 1.0)[:, None]
    amp = fails[:, None] * involved * strength * g.lognormal(math.log(40.0), 0.5, (nd, k)) * scale
    tau = g.uniform(0.7, 1.5, nd)
    onset = g.choice(np.array([1.0, 2.0, 3.0]), nd, p=[0.7, 0.2, 0.1])  # days of degradation before failing
    ramp = amp[row_disk] * (np.exp(-to_end / tau[row_disk]) * (to_end <= onset[row_disk]))[:, None]
    value = base[row_disk] + drift[row_disk] * t[:, None] + ramp
    return np.floor(value).astype(np.int64)


def generate(sf: float, split: str, seed: int, chunk: int) -> dict:
    """{table: pyarrow.Table} of one chunk; a table is absent from chunks past its own count."""
    import pyarrow as pa

    p, sch = plan(sf, split), schemas()
    cols: dict[str, dict] = {}
    if chunk < p["chunks"]["financial_account"]:
        ids, limits = accounts(p, split, seed)
        cols["financial_account"] = {"fa_customer_sk": ids, "transaction_limit": limits}
    if chunk < p["chunks"]["financial_transactions"]:
        cols["financial_transactions"] = transactions(p, split, seed, chunk)
    if chunk < p["chunks"]["failures"]:
        cols["failures"] = failures(p, split, seed, chunk)
    if chunk < p["chunks"]["customer_images"]:
        cols["customer_images"] = images(p, split, seed, chunk)
    if chunk < p["chunks"]["conversation_audio"]:
        first = chunk * AUDIO_CHUNK
        g = spec.rng(seed, NAME, split, "chunk", chunk, "conversation_audio")
        cols["conversation_audio"] = media.audio_chunk(
            media.vocabulary(seed), g, first, min(AUDIO_CHUNK, p["clips"] - first), split)
    return {name: pa.table(c, schema=sch[name]) for name, c in cols.items()}


def images(p: dict, split: str, seed: int, chunk: int) -> dict:
    """Columns of one chunk of customer_images: identities shuffled in the chunk, new pose/light/noise."""
    import numpy as np

    first = chunk * IMAGE_CHUNK
    n = min(IMAGE_CHUNK, p["images"] - first)
    g = spec.rng(seed, NAME, split, "chunk", chunk, "customer_images")
    ids = np.arange(first, first + n, dtype=np.int64)
    identity = g.permutation(ids % p["identities"])  # balanced, in an order the ids do not tell
    needed, index = np.unique(identity, return_inverse=True)
    pixels = media.render_faces(media.face_prototypes(seed, needed), index, g)
    return {"image_id": ids, "img_filename": [f"{split}_{i:08d}.pgm" for i in ids],
            "image": [media.pgm_bytes(px) for px in pixels], "identity": identity}


GROUP = spec.TableGroup(
    name=NAME, schemas=schemas, chunks=chunks, generate=generate, rows=table_rows,
    description="conversation audio, customer images, disk SMART failures, financial accounts and transactions",
)
