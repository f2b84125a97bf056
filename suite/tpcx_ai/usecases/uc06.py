"""UC06 hard-disk failure: oversampling + StandardScaler + SVC(rbf, class_weight='balanced').

As the kit: the features are the seven SMART raw counters; training keeps only drives that
eventually fail, labelled 1 on the rows within one day of the failure. The kit oversamples
with ADASYN (imbalanced-learn); here a seeded SMOTE-like oversampler in numpy (new minority
rows on segments between a minority row and one of its k nearest minority neighbours) brings
the minority class up to the majority's count, so the suite needs no extra dependency.
"""

SMART = ("smart_5_raw", "smart_10_raw", "smart_184_raw", "smart_187_raw", "smart_188_raw",
         "smart_197_raw", "smart_198_raw")
KEYS = ["serial_number", "date"]


def oversample(x, y, seed: int, k: int = 5):
    """x, y with minority rows added (SMOTE-like interpolation) up to the majority count."""
    import numpy as np
    from sklearn.neighbors import NearestNeighbors

    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2:
        return x, y
    minority = classes[np.argmin(counts)]
    xm = x[y == minority]
    need = int(counts.max() - counts.min())
    if need == 0 or len(xm) < 2:
        return x, y
    g = np.random.default_rng(seed)
    nn = NearestNeighbors(n_neighbors=min(k + 1, len(xm))).fit(xm)
    neighbours = nn.kneighbors(xm, return_distance=False)[:, 1:]
    base = g.integers(0, len(xm), need)
    other = neighbours[base, g.integers(0, neighbours.shape[1], need)]
    new = xm[base] + g.random((need, 1)) * (xm[other] - xm[base])
    return np.vstack([x, new]), np.concatenate([y, np.full(need, minority, dtype=y.dtype)])


def training_rows(df):
    """Rows of drives that fail, labelled 1 within `days` days of the failure (the kit's rule)."""
    import numpy as np

    failed = df.loc[df["failure"] == 1, ["serial_number", "date"]].groupby("serial_number")["date"].max()
    rows = df[df["serial_number"].isin(failed.index)]
    fail_day = rows["serial_number"].map(failed)
    days_left = (np.asarray(fail_day, dtype="datetime64[D]") - np.asarray(rows["date"], dtype="datetime64[D]"))
    label = (days_left.astype(np.int64) <= 1).astype(np.int64)
    return rows[list(SMART)].to_numpy(np.float64), label


def train(data, params: dict, seed: int):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    df = data.table("failures", ["serial_number", "date", "failure", *SMART])
    x, y = training_rows(df)
    x, y = oversample(x, y, seed, int(params.get("k_neighbors", 5)))
    model = make_pipeline(StandardScaler(), SVC(
        kernel=params.get("kernel", "rbf"), C=float(params.get("C", 1.0)),
        gamma=params.get("gamma", "scale"), class_weight="balanced", random_state=seed))
    model.fit(x, y)
    return model


def serve(model, data, params: dict):
    import numpy as np

    df = data.table("failures", [*KEYS, *SMART])
    pred = model.predict(df[list(SMART)].to_numpy(np.float64)) if len(df) else np.zeros(0, np.int64)
    out = df[KEYS].copy()
    out["prediction"] = pred.astype(np.int64)
    return out


def truth(data):
    df = data.table("failures", [*KEYS, "failure"])
    return df.rename(columns={"failure": "label"})
