"""Media tables of the signals group: conversation audio (UC02) and customer images (UC09).

Audio: a vocabulary of VOCAB pseudo-words, each with a fixed "pronunciation" (a sequence of
two-formant tone segments, each with its own duration) drawn from the population stream; an
utterance is a few words (Zipf-distributed word frequencies) separated by short pauses, spoken
by a speaker with their own pitch, tempo and loudness, in background noise. Each clip is a real
16-bit mono PCM WAV file (16 kHz), written with the stdlib `wave` module; the transcript is the
label.

Images: per-identity prototypes (a shared face-like template plus an identity's own smooth
random field, from the population stream); each image is its identity's prototype shifted by a
few pixels (pose), under a lighting gradient and brightness change, with pixel noise, stored as
a binary grayscale PGM file (P5), 96 x 96 pixels as the kit's aligned faces (grayscale: the
identity signal here is in intensity only, so colour would triple the bytes for nothing).
"""

import io
import wave

SAMPLE_RATE = 16_000
VOCAB = 240
IMAGE_SIZE = 96
_SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou")


def _np():
    import numpy as np

    return np


# ---------------------------------------------------------------- audio population

def vocabulary(seed: int) -> dict:
    """The words, their Zipf weights and pronunciations: the same for every split."""
    from suite.tpcx_ai.spec import rng

    np = _np()
    g = rng(seed, "signals", "population", "vocabulary")
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < VOCAB:
        n_syl = int(g.integers(1, 4))
        word = "".join(_SYLLABLES[int(i)] for i in g.integers(0, len(_SYLLABLES), n_syl))
        if word not in seen:
            seen.add(word)
            words.append(word)
    weights = 1.0 / np.arange(1, VOCAB + 1) ** 0.7
    segments = []
    for _ in range(VOCAB):
        n_seg = int(g.integers(2, 5))
        f1 = g.uniform(250.0, 950.0, n_seg)
        f2 = g.uniform(1000.0, 2800.0, n_seg)
        dur = g.uniform(0.05, 0.11, n_seg)
        amp = g.uniform(0.6, 1.0, n_seg)
        segments.append(np.stack([f1, f2, dur, amp], axis=1))
    return {"words": words, "weights": weights / weights.sum(), "segments": segments}


def _glide(x, width: int = 160):
    """A moving average over `width` samples (10 ms glides between segments), same length."""
    np = _np()
    c = np.cumsum(np.pad(x, (width // 2, width - width // 2), mode="edge"))
    return (c[width:] - c[:-width]) / width


def _say(segs, pitch: float, tempo: float, g):
    """One word as float samples: phase-continuous two-formant tones with gliding edges."""
    np = _np()
    lengths = np.maximum(1, (segs[:, 2] * tempo * SAMPLE_RATE).astype(np.int64))
    f1 = np.repeat(segs[:, 0] * pitch, lengths)
    f2 = np.repeat(segs[:, 1] * pitch, lengths)
    amp = np.repeat(segs[:, 3], lengths)
    f1, f2, amp = (_glide(x) for x in (f1, f2, amp))
    ph1 = np.cumsum(2 * np.pi * f1 / SAMPLE_RATE) + g.uniform(0, 2 * np.pi)
    ph2 = np.cumsum(2 * np.pi * f2 / SAMPLE_RATE) + g.uniform(0, 2 * np.pi)
    x = amp * (np.sin(ph1) + 0.6 * np.sin(ph2) + 0.25 * np.sin(2 * ph1))
    edge = min(160, len(x) // 4)
    ramp = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, edge))
    x[:edge] *= ramp
    x[len(x) - edge:] *= ramp[::-1]
    return x


def utterance(vocab: dict, g):
    """(transcript, int16 samples) of one clip: 3..7 words by one speaker in noise."""
    np = _np()
    n_words = int(g.integers(3, 8))
    ids = g.choice(VOCAB, size=n_words, p=vocab["weights"])
    pitch, tempo = g.uniform(0.93, 1.07), g.uniform(0.85, 1.15)
    parts = [np.zeros(int(g.uniform(0.08, 0.2) * SAMPLE_RATE))]
    for i in ids:
        parts.append(_say(vocab["segments"][i], pitch, tempo, g))
        parts.append(np.zeros(int(g.uniform(0.1, 0.22) * SAMPLE_RATE)))
    signal = np.concatenate(parts) * g.uniform(0.15, 0.3)
    signal += g.normal(0.0, g.uniform(0.004, 0.012), signal.shape)
    pcm = np.clip(signal * 32767, -32768, 32767).astype("<i2")
    return " ".join(vocab["words"][i] for i in ids), pcm


def wav_bytes(pcm) -> bytes:
    """A 16-bit mono PCM WAV file holding these samples."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def read_wav(data: bytes):
    """int16 samples of a mono 16-bit WAV file (what UC02 reads back)."""
    np = _np()
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            if w.getsampwidth() != 2 or w.getnchannels() != 1:
                raise ValueError("expected 16-bit mono PCM WAV")
            frames = w.readframes(w.getnframes())
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"not a readable WAV file: {exc}") from None
    return np.frombuffer(frames[: len(frames) // 2 * 2], dtype="<i2")


def audio_chunk(vocab: dict, g, first: int, n: int, split: str) -> dict:
    """Columns of `n` clips numbered from `first`."""
    ids, names, sizes, blobs, texts = [], [], [], [], []
    for k in range(first, first + n):
        text, pcm = utterance(vocab, g)
        blob = wav_bytes(pcm)
        ids.append(k)
        names.append(f"{split}_{k:08d}.wav")
        sizes.append(len(blob))
        blobs.append(blob)
        texts.append(text)
    return {"clip_id": ids, "wav_filename": names, "wav_filesize": sizes, "audio": blobs,
            "transcript": texts}


# ---------------------------------------------------------------- images

def _blobs(g, n: int, amp: float, width: tuple[float, float]):
    """A smooth random field: a sum of n Gaussian bumps on the image grid (separable)."""
    np = _np()
    s = IMAGE_SIZE
    grid = np.arange(s, dtype=np.float64)
    cy, cx = g.uniform(10, s - 10, n), g.uniform(10, s - 10, n)
    w, a = g.uniform(*width, n), g.uniform(-amp, amp, n)
    gy = np.exp(-((grid[:, None] - cy[None, :]) ** 2) / (2 * w * w))  # (s, n)
    gx = np.exp(-((grid[:, None] - cx[None, :]) ** 2) / (2 * w * w))
    return (gy * a) @ gx.T


def face_prototypes(seed: int, identities):
    """(len(identities), S, S) float prototypes: a face template plus each identity's own field."""
    from suite.tpcx_ai.spec import rng

    np = _np()
    s = IMAGE_SIZE
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float64) / s
    head = ((yy - 0.5) / 0.42) ** 2 + ((xx - 0.5) / 0.33) ** 2 < 1.0
    template = 60.0 + 80.0 * head
    out = np.empty((len(identities), s, s))
    for k, i in enumerate(identities):
        g = rng(seed, "signals", "population", "face", int(i))
        out[k] = template + _blobs(g, 24, 45.0, (4.0, 13.0))
    return out


def pgm_bytes(pixels) -> bytes:
    """A binary grayscale PGM (P5) file of a uint8 image."""
    h, w = pixels.shape
    return b"P5\n%d %d\n255\n" % (w, h) + pixels.tobytes()


def read_pgm(data: bytes):
    """uint8 pixels of a binary PGM (P5) file (what UC09 reads back; no header comments)."""
    import re

    np = _np()
    head = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", data)  # one whitespace byte ends the header
    if head is None:
        raise ValueError("expected a binary 8-bit PGM (P5) file")
    w, h = int(head.group(1)), int(head.group(2))
    pixels = np.frombuffer(data, dtype=np.uint8, count=w * h, offset=head.end())
    return pixels.reshape(h, w)


def render_faces(protos, identity, g):
    """uint8 images (n, S, S): prototype shifted (pose), lit (gradient, gain) and noisy."""
    np = _np()
    n, s = len(identity), IMAGE_SIZE
    pad = 5
    padded = np.pad(protos, ((0, 0), (pad, pad), (pad, pad)), mode="edge")
    dy, dx = g.integers(-4, 5, n) + pad, g.integers(-4, 5, n) + pad
    rows = dy[:, None] + np.arange(s)[None, :]
    cols = dx[:, None] + np.arange(s)[None, :]
    img = padded[identity[:, None, None], rows[:, :, None], cols[:, None, :]]
    ramp = np.linspace(-1.0, 1.0, s)
    light = (g.uniform(-0.25, 0.25, n)[:, None, None] * ramp[None, None, :]
             + g.uniform(-0.15, 0.15, n)[:, None, None] * ramp[None, :, None])
    img = img * (g.uniform(0.75, 1.25, n)[:, None, None] + light) + g.normal(0, 12.0, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)
