"""UC10 fraud detection: LogisticRegression(lbfgs, C=1.0) on two features, as the kit.

Features: amount / transaction_limit of the sending account, and hour of day / 23. The join of
transactions to accounts is a vectorised index lookup (account ids are 0..n-1 in each split;
a general merge is used otherwise).
"""

KEYS = ["transaction_id"]


def features(data):
    """(transaction ids, (n, 2) feature matrix) of a split."""
    import numpy as np
    import pyarrow.compute as pc

    tx = data.arrow("financial_transactions", ["transaction_id", "sender_id", "amount", "transaction_time"])
    acc = data.table("financial_account", ["fa_customer_sk", "transaction_limit"])
    sender = tx.column("sender_id").to_numpy()
    ids = acc["fa_customer_sk"].to_numpy()
    limits = acc["transaction_limit"].to_numpy(np.float64)
    if len(ids) and np.array_equal(ids, np.arange(len(ids))):
        limit = limits[sender]
    else:
        order = np.argsort(ids)
        pos = np.clip(np.searchsorted(ids[order], sender), 0, max(len(ids) - 1, 0))
        limit = np.where(ids[order][pos] == sender, limits[order][pos], np.nan)
    hour = pc.hour(tx.column("transaction_time")).to_numpy()  # any timestamp unit
    x = np.column_stack([tx.column("amount").to_numpy() / limit, hour / 23.0])
    return tx.column("transaction_id").to_numpy(), np.nan_to_num(x)


def train(data, params: dict, seed: int):
    from sklearn.linear_model import LogisticRegression

    _, x = features(data)
    y = data.arrow("financial_transactions", ["is_fraud"]).column("is_fraud").to_numpy()
    model = LogisticRegression(solver=params.get("solver", "lbfgs"), C=float(params.get("C", 1.0)),
                               max_iter=int(params.get("max_iter", 100)), random_state=seed)
    return model.fit(x, y)


def serve(model, data, params: dict):
    import pandas as pd

    ids, x = features(data)
    return pd.DataFrame({"transaction_id": ids, "prediction": model.predict(x).astype("int64")})


def truth(data):
    df = data.table("financial_transactions", ["transaction_id", "is_fraud"])
    return df.rename(columns={"is_fraud": "label"})
