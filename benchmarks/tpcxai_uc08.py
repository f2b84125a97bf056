"""UC08's duplicate baskets: the same XGBoost model trained on every row, or on the distinct
(basket, trip type) rows weighted by their count; time and agreement of the two.

    python benchmarks/tpcxai_uc08.py [--scale-factor 0.1] [--rounds 10] [--seed 11]

Prints the training rows and the distinct share, each fit's seconds (wall and CPU: every row;
the distinct rows weighted; the same in `uc08.locality_order`), the serving prediction
time for all rows vs distinct rows, and the agreement of the two models' predictions (share of
equal classes, max |delta p|) on the serving split, and the same for the locality-ordered fit.
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

    from suite.tpcx_ai import spec
    from suite.tpcx_ai.tables import retail
    from suite.tpcx_ai.tables.retail import column, positions
    from suite.tpcx_ai.usecases import uc08

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
    def fit(rows, weight=None):
        t, c = time.perf_counter(), time.process_time()
        model = XGBClassifier(**kw).fit(x[rows], y[rows], sample_weight=weight)
        return model, time.perf_counter() - t, time.process_time() - c

    full, full_s, full_cpu = fit(np.arange(x.shape[0]))
    weighted, weighted_s, weighted_cpu = fit(first, counts.astype(np.float32))
    order = uc08.locality_order(x[first])
    local, local_s, local_cpu = fit(first[order], counts[order].astype(np.float32))
    print(f"fit {a.rounds} rounds, wall (CPU) s: all rows {full_s:.1f} ({full_cpu:.1f}), distinct weighted "
          f"{weighted_s:.1f} ({weighted_cpu:.1f}), distinct weighted in locality order {local_s:.1f} ({local_cpu:.1f}); "
          f"all / distinct {full_s / weighted_s:.2f}x wall {full_cpu / weighted_cpu:.2f}x CPU, "
          f"all / distinct in order {full_s / local_s:.2f}x wall {full_cpu / local_cpu:.2f}x CPU")
    _, xs = uc08.features(data["serving"], depts)
    t = time.perf_counter()
    pa_ = full.predict_proba(xs)
    all_s = time.perf_counter() - t
    t = time.perf_counter()
    f2, inv, _ = uc08.unique_rows(xs)
    pb = weighted.predict_proba(xs[f2])[inv]
    uniq_s = time.perf_counter() - t
    agree = float((pa_.argmax(1) == pb.argmax(1)).mean())
    pc = local.predict_proba(xs)
    print(f"locality order vs all rows: predictions agree {float((pa_.argmax(1) == pc.argmax(1)).mean()):.4%}, "
          f"max |dp| {float(np.abs(pa_ - pc).max()):.2e}")
    print(f"serve {xs.shape[0]:,} rows: all {all_s:.2f} s, distinct {uniq_s:.2f} s ({len(f2):,} rows); "
          f"predictions agree {agree:.4%}, max |dp| {float(np.abs(pa_ - pb).max()):.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
