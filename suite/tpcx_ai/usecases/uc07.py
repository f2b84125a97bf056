"""UC07: product rating prediction by biased matrix factorisation (the kit: surprise.SVD()).

The model is surprise's SVD, fitted the way surprise fits it by default: a global mean plus user
and item biases plus user x item factors (100 factors, initialised N(0, 0.1)), 20 epochs of SGD on
the squared error with learning rate 0.005 and regularisation 0.02, on de-duplicated (user, item)
pairs (the last rating of a pair counts). Surprise walks the ratings one by one in Cython; here each
epoch walks them in shuffled mini-batches, updating all the batch's pairs at once with numpy
(np.add.at sums the updates of a user or item seen twice in a batch), which is the same
algorithm up to the order of the updates. Predictions are clipped to 1..5, and a user or item not
in the training set contributes no bias and no factors, as in surprise.
"""

KEYS = ["user_id", "product_id"]


def _pairs(data, with_rating: bool):
    columns = KEYS + (["rating"] if with_rating else [])
    frame = data.table("product_rating", columns=columns)
    return frame.drop_duplicates(subset=KEYS, keep="last").reset_index(drop=True)


def _scatter_add(target, idx, rows):
    """target[idx] += rows, summing repeated indices exactly as np.add.at does, but faster."""
    import numpy as np

    if len(target) <= len(idx):  # a small table (the items): one bincount over its cells
        width = rows.size // len(idx)
        flat = (idx[:, None] * width + np.arange(width)).ravel() if width > 1 else idx
        target += np.bincount(flat, weights=rows.ravel(), minlength=target.size).reshape(target.shape)
        return
    order = np.argsort(idx, kind="stable")
    ordered = idx[order]
    last = np.ones(len(idx), bool)
    np.not_equal(ordered[:-1], ordered[1:], out=last[:-1])
    target[ordered[last]] += rows[order[last]]  # each index once
    rest = order[~last]
    if len(rest):  # the few repeats
        np.add.at(target, idx[rest], rows[rest])


def _epoch(model, users, items, ratings, order, lr, reg, batch):
    import numpy as np

    mu, bu, bi, pu, qi = model["mean"], model["user_bias"], model["item_bias"], model["user_f"], model["item_f"]
    for start in range(0, len(order), batch):
        idx = order[start:start + batch]
        u, i, r = users[idx], items[idx], ratings[idx]
        p, q = pu[u], qi[i]
        err = r - (mu + bu[u] + bi[i] + np.einsum("ij,ij->i", p, q))
        _scatter_add(bu, u, lr * (err - reg * bu[u]))
        _scatter_add(bi, i, lr * (err - reg * bi[i]))
        _scatter_add(pu, u, lr * (err[:, None] * q - reg * p))
        _scatter_add(qi, i, lr * (err[:, None] * p - reg * q))


def train(data, params, seed):
    import numpy as np

    from suite.tpcx_ai import spec

    frame = _pairs(data, with_rating=True)
    users = frame["user_id"].to_numpy(np.int64)
    items = frame["product_id"].to_numpy(np.int64)
    ratings = frame["rating"].to_numpy(np.float64)
    k = int(params.get("n_factors", 100))
    rng = spec.rng(seed, "uc07", "train")
    n_users, n_items = int(users.max()) + 1, int(items.max()) + 1
    model = {
        "mean": float(ratings.mean()),
        "user_bias": np.zeros(n_users), "item_bias": np.zeros(n_items),
        "user_f": rng.normal(float(params.get("init_mean", 0.0)), float(params.get("init_std_dev", 0.1)), (n_users, k)),
        "item_f": rng.normal(float(params.get("init_mean", 0.0)), float(params.get("init_std_dev", 0.1)), (n_items, k)),
    }
    lr, reg = float(params.get("lr_all", 0.005)), float(params.get("reg_all", 0.02))
    batch = int(params.get("batch_size", 1024))
    for _ in range(int(params.get("n_epochs", 20))):
        _epoch(model, users, items, ratings, rng.permutation(len(ratings)), lr, reg, batch)
    # users and items never rated keep no factors (surprise ignores what it has not seen)
    model["user_f"][np.bincount(users, minlength=n_users) == 0] = 0.0
    model["item_f"][np.bincount(items, minlength=n_items) == 0] = 0.0
    return model


def predict(model, users, items):
    import numpy as np

    bu, bi, pu, qi = model["user_bias"], model["item_bias"], model["user_f"], model["item_f"]
    ku = (users >= 0) & (users < len(bu))
    ki = (items >= 0) & (items < len(bi))
    u, i = np.where(ku, users, 0), np.where(ki, items, 0)
    est = model["mean"] + np.where(ku, bu[u], 0.0) + np.where(ki, bi[i], 0.0)
    est += np.where(ku & ki, np.einsum("ij,ij->i", pu[u], qi[i]), 0.0)
    return np.clip(est, 1.0, 5.0)


def serve(model, data, params):
    import numpy as np

    frame = _pairs(data, with_rating=False)
    frame["prediction"] = predict(model, frame["user_id"].to_numpy(np.int64), frame["product_id"].to_numpy(np.int64))
    return frame


def truth(data):
    frame = _pairs(data, with_rating=True).rename(columns={"rating": "label"})
    frame["label"] = frame["label"].astype("float64")
    return frame
