"""UC05: price prediction from a listing's description (a neural regressor on text features).

The kit tokenises the description (Keras Tokenizer, padded to 200), and trains Embedding(300) ->
GRU(16) -> Dense(128) -> Dense(64) -> Dense(1) with MSE loss and Adam (lr 1e-3) for 15 epochs in
batches of 512. Without TensorFlow, we keep the regressor's head and training and change the text
encoder: TF-IDF of the description's words -> scikit-learn MLPRegressor with hidden layers
(128, 64), ReLU, Adam at lr 1e-3, 15 epochs in batches of 512, on log1p(price) standardised (so
the squared error is the squared log error the metric measures); the prediction is expm1 of the
output, at least 0. A vocabulary of up to `dense_features` words is fed as a dense matrix (BLAS
is much faster than scipy.sparse for the first layer); a larger one stays sparse. The network's
matrices are small (a batch of 512 x 128 units), so BLAS runs on one thread: more threads only
add synchronisation (5x slower with two busy cores).
"""

KEYS = ["listing_id"]


def _vectorizer(params):
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=tuple(params.get("ngram_range", (1, 1))),
                           max_features=int(params.get("max_features", 20000)), sublinear_tf=True)


def _dense(x, params):
    return x.toarray() if x.shape[1] <= int(params.get("dense_features", 5000)) else x


def train(data, params, seed):
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor
    from threadpoolctl import threadpool_limits

    frame = data.table("marketplace", columns=["description", "price"])
    vectorizer = _vectorizer(params)
    x = _dense(vectorizer.fit_transform(frame["description"].fillna("")), params)
    y = np.log1p(np.maximum(frame["price"].to_numpy(np.float64), 0.0))
    mean, std = float(y.mean()), float(y.std()) or 1.0
    batch = int(params.get("batch_size", 512))
    epochs = int(params.get("epochs", 15))
    net = MLPRegressor(hidden_layer_sizes=tuple(params.get("hidden_layer_sizes", (128, 64))),
                       activation="relu", solver="adam", learning_rate_init=float(params.get("learning_rate", 1e-3)),
                       batch_size=batch, max_iter=epochs, shuffle=True, random_state=int(seed) % (2 ** 32),
                       early_stopping=False, tol=0.0, n_iter_no_change=epochs + 1)
    with warnings.catch_warnings(), threadpool_limits(limits=int(params.get("blas_threads", 1)), user_api="blas"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        net.fit(x, (y - mean) / std)
    return {"vectorizer": vectorizer, "net": net, "mean": mean, "std": std}


def serve(model, data, params):
    import numpy as np

    frame = data.table("marketplace", columns=KEYS + ["description"])
    x = _dense(model["vectorizer"].transform(frame["description"].fillna("")), params)
    log_price = model["net"].predict(x) * model["std"] + model["mean"]
    out = frame[KEYS].copy()
    out["prediction"] = np.maximum(np.expm1(log_price), 0.0)
    return out


def truth(data):
    frame = data.table("marketplace", columns=KEYS + ["price"])
    return frame.rename(columns={"price": "label"})
