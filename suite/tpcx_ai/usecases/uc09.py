"""UC09 face recognition: PCA embedding of the decoded images + LogisticRegression.

The kit aligns faces with dlib landmarks and embeds them with a fine-tuned OpenFace network
(TensorFlow), then classifies the 128-d embeddings with LogisticRegression. Here the embedding is
a whitened PCA of the pixel intensities (each image standardised first, which removes global
lighting gain), fitted on the training images; the classifier is the kit's LogisticRegression.
"""


def pixels(blobs):
    """(n, pixels) float matrix of PGM images, each standardised to zero mean, unit variance."""
    import numpy as np

    from suite.tpcx_ai.tables.signals_media import read_pgm

    x = np.stack([read_pgm(b).ravel() for b in blobs]).astype(np.float64) if len(blobs) else np.zeros((0, 1))
    x -= x.mean(axis=1, keepdims=True)
    x /= x.std(axis=1, keepdims=True) + 1e-9
    return x


def train(data, params: dict, seed: int):
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    df = data.table("customer_images", ["image", "identity"])
    x = pixels(list(df["image"]))
    components = min(int(params.get("n_components", 128)), len(x) - 1, x.shape[1])
    model = make_pipeline(
        PCA(n_components=components, whiten=True, random_state=seed),
        LogisticRegression(C=float(params.get("C", 1.0)), max_iter=int(params.get("max_iter", 1000))))
    model.fit(x, df["identity"].to_numpy())
    return model


def serve(model, data, params: dict):
    import numpy as np
    import pandas as pd

    df = data.table("customer_images", ["image_id", "image"])
    pred = model.predict(pixels(list(df["image"]))) if len(df) else np.zeros(0, np.int64)
    return pd.DataFrame({"image_id": df["image_id"].to_numpy(), "prediction": pred})


def truth(data):
    df = data.table("customer_images", ["image_id", "identity"])
    return df.rename(columns={"identity": "label"})
