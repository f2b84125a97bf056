"""UC02 speech to text: word segmentation + MFCC features + an MLP over the vocabulary.

Each clip is cut into words where its frame energy rises above a level between the noise
floor and the speech peaks; each word becomes a fixed-size vector (12 MFCCs averaged over 5
equal time slices, their standard deviations and the log duration); an MLP classifies the word.
The transcript is the predicted words in order. The kit's DeepSpeech-like CTC network needs
TensorFlow, which the suite does not depend on (see `differs:` in uc02.yaml).
"""

SLICES = 5
N_MFCC = 13
_FRAME, _HOP, _NFFT, _NMEL = 400, 160, 512, 26


def _mel_bank(sample_rate: int):
    import numpy as np

    def mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    edges = 700.0 * (10 ** (np.linspace(mel(0.0), mel(sample_rate / 2), _NMEL + 2) / 2595.0) - 1.0)
    bins = np.fft.rfftfreq(_NFFT, 1.0 / sample_rate)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    up = (bins[None, :] - lo) / (mid - lo)
    down = (hi - bins[None, :]) / (hi - mid)
    return np.maximum(0.0, np.minimum(up, down))


def mfcc(samples, sample_rate: int):
    """(frames, N_MFCC) cepstra and (frames,) log energies of int16 samples (25 ms / 10 ms)."""
    import numpy as np

    x = samples.astype(np.float64) / 32768.0
    x = np.append(x[0], x[1:] - 0.97 * x[:-1])
    if len(x) < _FRAME:
        x = np.pad(x, (0, _FRAME - len(x)))
    n = 1 + (len(x) - _FRAME) // _HOP
    idx = np.arange(_FRAME)[None, :] + _HOP * np.arange(n)[:, None]
    power = np.abs(np.fft.rfft(x[idx] * np.hamming(_FRAME), _NFFT)) ** 2 / _NFFT
    logmel = np.log(power @ _mel_bank(sample_rate).T + 1e-10)
    k = np.arange(_NMEL)
    dct = np.cos(np.pi / _NMEL * (k[None, :] + 0.5) * np.arange(N_MFCC)[:, None])
    return logmel @ dct.T, np.log(power.sum(axis=1) + 1e-10)


def words(energy, min_gap: int = 4, min_len: int = 4):
    """(start, end) frame runs of speech: energy above the floor-to-peak midpoint."""
    import numpy as np

    floor, peak = np.percentile(energy, 10), np.percentile(energy, 98)
    active = np.concatenate([[False], energy > floor + 0.45 * (peak - floor), [False]])
    change = np.flatnonzero(active[1:] != active[:-1])
    runs = [[int(s), int(e)] for s, e in zip(change[::2], change[1::2])]
    merged: list = []
    for s, e in runs:
        if merged and s - merged[-1][1] < min_gap:
            merged[-1][1] = e
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged if e - s >= min_len]


def clip_features(blob: bytes):
    """(words, features) matrix of one WAV clip, one row per segmented word."""
    import numpy as np

    from suite.tpcx_ai.tables.signals_media import SAMPLE_RATE, read_wav

    cep, energy = mfcc(read_wav(blob), SAMPLE_RATE)
    rows = []
    for s, e in words(energy):
        w = cep[s:e, 1:]
        parts = [p.mean(axis=0) for p in np.array_split(w, SLICES)]
        rows.append(np.concatenate(parts + [w.std(axis=0), [np.log(e - s)]]))
    return np.array(rows).reshape(len(rows), SLICES * (N_MFCC - 1) + N_MFCC - 1 + 1)


def train(data, params: dict, seed: int):
    """Fit scaler + MLP on the words of clips whose segmentation matches their transcript."""
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    df = data.table("conversation_audio", ["audio", "transcript"])
    feats, labels = [], []
    for blob, text in zip(df["audio"], df["transcript"]):
        f, w = clip_features(blob), text.split()
        if len(f) == len(w):  # alignment by order; clips that mis-segment are skipped
            feats.append(f)
            labels.extend(w)
    model = make_pipeline(StandardScaler(), MLPClassifier(
        hidden_layer_sizes=tuple(params.get("hidden_layer_sizes", (128,))),
        alpha=float(params.get("alpha", 1e-3)), max_iter=int(params.get("max_iter", 100)),
        random_state=seed))
    # small matrices: one BLAS thread is faster than several contending for the cores
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a fixed epoch budget, as the kit's
        model.fit(np.vstack(feats), np.array(labels))
    return model


def serve(model, data, params: dict):
    """clip_id + predicted transcript (the words predicted for the clip's segments)."""
    import numpy as np
    import pandas as pd

    df = data.table("conversation_audio", ["clip_id", "audio"])
    feats = [clip_features(blob) for blob in df["audio"]]
    counts = [len(f) for f in feats]
    stacked = np.vstack([f for f in feats if len(f)]) if any(counts) else None
    predicted = list(model.predict(stacked)) if stacked is not None else []
    bounds = np.cumsum([0] + counts)
    texts = [" ".join(predicted[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    return pd.DataFrame({"clip_id": df["clip_id"].to_numpy(), "prediction": texts})


def truth(data):
    import pandas as pd

    df = data.table("conversation_audio", ["clip_id", "transcript"])
    return pd.DataFrame({"clip_id": df["clip_id"].to_numpy(), "label": df["transcript"].to_numpy()})
