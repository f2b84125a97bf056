"""UC08's duplicate baskets: the same XGBoost model trained on every row, or on the distinct
(basket, trip type) rows weighted by their count; time and agreement of the two.

    python benchmarks/tpcxai_uc08.py [--scale-factor 0.1] [--rounds 10] [--seed 11]

Prints the training rows and the distinct share, each fit's seconds, the serving prediction
time for all rows vs distinct rows, and the agreement of the two models' predictions (share of
equal classes, max |delta p|) on the serving split.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main(argv=None) -> int:
    import numpy as np
    from xgboost import XGBClassifier

    from suite.tpcxai import spec
    from suite.tpcxai.tables import retail
    from suite.tpcxai.tables.retail import column, positions
    from suite.tpcxai.usecases import uc08

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale-factor", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args(argv)
    t = time.perf_counter()
    data = {s: spec.MemoryData(spec.generate_split(retail.GROUP, a.scale_factor, s, a.seed)) for s in ("training", "serving")}
    print(f"generated SF {a.scale_factor:g} in {time.perf_counter() - t:.1f} s")
    depts = uc08.departments_of(data["training"])
    ids, x = uc08.features(data["training"], depts)
    lab = data["training"].arrow("order", ["o_order_id", "o_trip_type"])
    trip = column(lab, "o_trip_type", np.int64)[positions(column(lab, "o_order_id"), ids)]
    keep = np.flatnonzero(trip != uc08.DROPPED_CLASS)
    classes, y = np.unique(trip[keep], return_inverse=True)
    x = x[keep]
    t = time.perf_counter()
    first, _, counts = uc08.unique_rows(x, y)
    dedup_s = time.perf_counter() - t
    print(f"training rows {x.shape[0]:,}, distinct {len(first):,} ({1 - len(first) / x.shape[0]:.1%} duplicates), "
          f"found in {dedup_s:.2f} s")
    kw = dict(n_estimators=a.rounds, tree_method="hist", objective="multi:softprob", max_bin=256,
              n_jobs=uc08._n_jobs(), random_state=a.seed)
    t = time.perf_counter()
    full = XGBClassifier(**kw).fit(x, y)
    full_s = time.perf_counter() - t
    t = time.perf_counter()
    weighted = XGBClassifier(**kw).fit(x[first], y[first], sample_weight=counts.astype(np.float32))
    weighted_s = time.perf_counter() - t
    print(f"fit {a.rounds} rounds: all rows {full_s:.1f} s, distinct weighted {weighted_s:.1f} s "
          f"({full_s / weighted_s:.2f}x)")
    _, xs = uc08.features(data["serving"], depts)
    t = time.perf_counter()
    pa_ = full.predict_proba(xs)
    all_s = time.perf_counter() - t
    t = time.perf_counter()
    f2, inv, _ = uc08.unique_rows(xs)
    pb = weighted.predict_proba(xs[f2])[inv]
    uniq_s = time.perf_counter() - t
    agree = float((pa_.argmax(1) == pb.argmax(1)).mean())
    print(f"serve {xs.shape[0]:,} rows: all {all_s:.2f} s, distinct {uniq_s:.2f} s ({len(f2):,} rows); "
          f"predictions agree {agree:.4%}, max |dp| {float(np.abs(pa_ - pb).max()):.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
