"""The scoring phase's quality metrics: predictions joined to truth on the use case's keys.

sklearn's accuracy_score, f1_score (binary, positive class 1), matthews_corrcoef,
mean_squared_log_error and median_absolute_error, and the kit's word-level WER
(suite/tpcx_ai/wer.py, word_error_rate). Negative values are clipped to 0 before MSLE, as the
kit's UC03 serving clips its forecasts (MSLE is undefined below -1).
"""

import math

from suite.errors import RunError, expected_got

LOWER_IS_BETTER = ("word_error_rate", "mean_squared_log_error", "median_absolute_error")


def _wer(truth, pred) -> float:
    from suite.tpcx_ai.wer import word_error_rate   # written with the signals group (UC02)

    return float(word_error_rate(list(truth), list(pred)))


def compute(metric: str, truth, pred) -> float:
    """One metric over two aligned sequences (numpy arrays or pandas Series)."""
    import numpy as np
    from sklearn import metrics as m

    if metric == "word_error_rate":
        return _wer(truth, pred)
    if metric == "accuracy_score":
        return float(m.accuracy_score(truth, pred))
    if metric == "f1_score":
        return float(m.f1_score(truth, pred, pos_label=1, average="binary"))
    if metric == "matthews_corrcoef":
        return float(m.matthews_corrcoef(truth, pred))
    if metric == "mean_squared_log_error":
        return float(m.mean_squared_log_error(np.clip(np.asarray(truth, float), 0, None),
                                              np.clip(np.asarray(pred, float), 0, None)))
    if metric == "median_absolute_error":
        return float(m.median_absolute_error(truth, pred))
    raise ValueError(f"quality metric {metric!r}: not one of ours")


def join(truth, pred, keys, where: str):
    """Truth and predictions aligned on the keys; every truth row needs exactly one prediction."""
    keys = list(keys)
    for name, frame, cols in (("truth", truth, keys + ["label"]), ("predictions", pred, keys + ["prediction"])):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise RunError(expected_got(where, f"{name} column {missing[0]}", f"columns {', '.join(cols)}", "none"))
    if pred.duplicated(keys).any():
        raise RunError(expected_got(where, "predictions", f"one row per key ({', '.join(keys)})", "duplicates"))
    merged = truth[keys + ["label"]].merge(pred[keys + ["prediction"]], on=keys, how="left", validate="many_to_one")
    lost = int(merged["prediction"].isna().sum())
    if lost:
        raise RunError(expected_got(where, "predictions", f"one for each of the {len(truth)} truth rows",
                                    f"{lost} rows without a prediction"))
    return merged["label"], merged["prediction"]


def score(metric: str, truth, pred, keys, where: str) -> float:
    t, p = join(truth, pred, keys, where)
    value = compute(metric, t, p)
    if not math.isfinite(value):
        raise RunError(expected_got(where, metric, "a finite value", value))
    return value


def _constant_candidates(metric: str, truth) -> list:
    """Constants worth trying: every label value (the 200 most common), and the metric's own
    optimum where one exists (MSLE: expm1 of the mean log1p; MedAE: the midpoints of the labels'
    shortest half-covering intervals; WER: the empty transcript and the most common word)."""
    import numpy as np
    import pandas as pd

    values = pd.Series(np.asarray(truth, dtype=object) if metric == "word_error_rate" else np.asarray(truth))
    out = list(values.value_counts().index[:200])
    if metric == "mean_squared_log_error":
        out.append(float(np.expm1(np.log1p(np.clip(values.astype(float), 0, None)).mean())))
    if metric == "median_absolute_error":
        y = np.sort(values.astype(float).to_numpy())
        h = len(y) // 2
        if h:
            width = y[h:] - y[:len(y) - h]
            i = int(np.argmin(width))
            out += [float((y[i] + y[i + h]) / 2), float(np.median(y))]
    if metric == "word_error_rate":
        words = pd.Series(" ".join(map(str, values)).split())
        out += [""] + ([words.value_counts().index[0]] if len(words) else [])
    return out


def best_constant(metric: str, truth) -> tuple[float, object]:
    """(value, constant) of the best constant predictor on these labels: the score a model that
    ignores its input can reach on the scoring split (an oracle bound: the constant is chosen
    with the scoring labels), which a model must beat."""
    best = None
    lower = metric in LOWER_IS_BETTER
    for c in _constant_candidates(metric, truth):
        value = compute(metric, truth, [c] * len(truth))
        if best is None or (value < best[0] if lower else value > best[0]):
            best = (value, c)
    return best


def beats(metric: str, value: float, constant_value: float) -> bool:
    """The model's value strictly better than the best constant's."""
    return value < constant_value if metric in LOWER_IS_BETTER else value > constant_value


def score_with_constant(metric: str, truth, pred, keys, where: str) -> tuple[float, float, object]:
    """(the model's value, the best constant's value, that constant) on the joined rows."""
    t, p = join(truth, pred, keys, where)
    value = compute(metric, t, p)
    if not math.isfinite(value):
        raise RunError(expected_got(where, metric, "a finite value", value))
    const_value, const = best_constant(metric, t)
    return value, const_value, const
