"""The signals table group (audio, images, failures, financial) and UC02, UC06, UC09, UC10."""

import pickle
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.tpcx_ai import spec
from suite.tpcx_ai.tables import signals
from suite.tpcx_ai.tables import signals_media
from suite.tpcx_ai.usecases import uc02
from suite.tpcx_ai.usecases import uc06
from suite.tpcx_ai.usecases import uc09
from suite.tpcx_ai.usecases import uc10
from suite.tpcx_ai.wer import word_distance, word_error_rate

SF, SEED = 0.01, 11
ROOT = Path(__file__).resolve().parents[2]
def accuracy_score(truth, pred):
    """sklearn's, imported when a test scores: collecting this file (in every xdist worker) then does not import
    sklearn and scipy (issue 47: the suite on a busy machine)."""
    from sklearn.metrics import accuracy_score as score

    return score(truth, pred)


def matthews_corrcoef(truth, pred):
    """sklearn's, imported when a test scores (as accuracy_score)."""
    from sklearn.metrics import matthews_corrcoef as score

    return score(truth, pred)


USE_CASES = {2: (uc02, word_error_rate, 0.5, "lower"), 6: (uc06, matthews_corrcoef, 0.19, "higher"),
             9: (uc09, accuracy_score, 0.9, "higher"), 10: (uc10, accuracy_score, 0.7, "higher")}


def passes(value, threshold, direction):
    return value <= threshold if direction == "lower" else value >= threshold


def spec_of(number):
    return yaml.safe_load((ROOT / "workloads" / "tpcx-ai" / f"uc{number:02d}.yaml").read_text())


@pytest.fixture(scope="module")
def splits():
    return {s: spec.generate_split(signals.GROUP, SF, s, SEED) for s in ("training", "scoring")}


@pytest.fixture(scope="module")
def runs(splits):
    """{uc: (model, predictions joined to truth)} for each use case, trained once."""
    out = {}
    for number, (module, *_rest) in USE_CASES.items():
        params = spec_of(number)["params"]
        model = module.train(spec.MemoryData(splits["training"]), params, SEED)
        pred = module.serve(model, spec.MemoryData(splits["scoring"], hide_labels=True), params)
        truth = module.truth(spec.MemoryData(splits["scoring"]))
        out[number] = (model, pred, truth)
    return out


# ---------------------------------------------------------------- word error rate

def test_wer_counts_substitutions_insertions_deletions():
    assert word_error_rate(["a b c"], ["a b c"]) == 0.0
    assert word_error_rate(["a b c d"], ["a x c d"]) == 0.25
    assert word_error_rate(["a b"], ["a b c"]) == 0.5
    assert word_error_rate(["a b c d"], ["a d"]) == 0.5
    assert word_error_rate(["a b"], [""]) == 1.0


def test_wer_sums_over_utterances_rather_than_averaging():
    # 1 error in 1 word and 0 in 3 words: corpus WER 1/4, not the mean 1/2
    assert word_error_rate(["a", "b c d"], ["x", "b c d"]) == 0.25


def test_wer_rejects_mismatched_or_empty_input():
    with pytest.raises(ValueError):
        word_error_rate(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        word_error_rate([""], ["a"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=8), st.lists(st.sampled_from("abcd"), max_size=8))
def test_word_distance_is_a_bounded_symmetric_metric(a, b):
    d = word_distance(a, b)
    assert d == word_distance(b, a)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))
    assert (d == 0) == (a == b)


# ---------------------------------------------------------------- generation

def test_schemas_mark_labels_and_files(splits):
    schemas = signals.GROUP.schemas()
    labels = {name: [f.name for f in s if spec.is_label(f)] for name, s in schemas.items()}
    assert labels == {"financial_account": [], "financial_transactions": ["is_fraud"], "failures": ["failure"],
                      "customer_images": ["identity"], "conversation_audio": ["transcript"]}
    assert schemas["conversation_audio"].field("audio").metadata == {b"ext": b"wav"}
    assert schemas["customer_images"].field("image").metadata == {b"ext": b"pgm"}
    for name, table in splits["training"].items():
        assert table.schema.equals(schemas[name]) and table.num_rows > 0


def test_files_are_real_wav_and_pgm(splits):
    audio = splits["training"]["conversation_audio"]
    blob = audio.column("audio")[0].as_py()
    assert blob[:4] == b"RIFF" and blob[8:12] == b"WAVE" and len(blob) == audio.column("wav_filesize")[0].as_py()
    assert len(signals_media.read_wav(blob)) > signals_media.SAMPLE_RATE // 2
    image = signals_media.read_pgm(splits["training"]["customer_images"].column("image")[0].as_py())
    assert image.shape == (signals_media.IMAGE_SIZE, signals_media.IMAGE_SIZE) and image.std() > 10


def test_pgm_and_wav_round_trip_any_bytes():
    pixels = np.array([[10, 32, 9], [0, 255, 13]], dtype=np.uint8)  # whitespace bytes first
    assert np.array_equal(signals_media.read_pgm(signals_media.pgm_bytes(pixels)), pixels)
    with pytest.raises(ValueError):
        signals_media.read_pgm(b"P6\n2 2\n255\n" + bytes(12))
    pcm = np.array([0, -32768, 32767, 5], dtype="<i2")
    assert np.array_equal(signals_media.read_wav(signals_media.wav_bytes(pcm)), pcm)


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=64), st.sampled_from([b"", b"P5\n2 2\n255\n", b"RIFF"]))
def test_decoders_reject_garbage_with_value_error(tail, head):
    for read in (signals_media.read_pgm, signals_media.read_wav):
        try:
            read(head + tail)
        except ValueError:
            pass


def test_chunks_are_deterministic_and_independent_of_order(splits):
    n = signals.GROUP.chunks(SF, "training")
    assert n >= 4  # audio and transactions span several chunks at this SF
    backward = {c: signals.GROUP.generate(SF, "training", SEED, c) for c in reversed(range(n))}
    for name, whole in splits["training"].items():
        parts = [backward[c][name] for c in range(n) if name in backward[c]]
        assert pa.concat_tables(parts).equals(whole), name
    other = signals.GROUP.generate(SF, "training", SEED + 1, 0)
    assert not other["financial_transactions"].equals(backward[0]["financial_transactions"])


def test_chunk_count_and_rows_follow_the_row_drivers():
    d = spec.row_drivers(1.0)
    p = signals.plan(1.0, "training")
    assert p["transactions"] == round(d["financial_transactions"])  # ~7 M at SF 1
    assert p["disks"] * p["days"] == pytest.approx(d["failures"], rel=0.02)
    assert p["clips"] == round(d["audio_clips"])
    assert signals.plan(1.0, "scoring")["transactions"] == round(0.1 * d["financial_transactions"])


def test_scoring_over_represents_positives(splits):
    train_rate = pa.compute.mean(splits["training"]["financial_transactions"].column("is_fraud")).as_py()
    score_rate = pa.compute.mean(splits["scoring"]["financial_transactions"].column("is_fraud")).as_py()
    assert 0.08 < train_rate < 0.16 and 0.45 < score_rate < 0.55


def test_serving_view_hides_labels(splits):
    view = spec.MemoryData(splits["scoring"], hide_labels=True)
    for name, label in (("failures", "failure"), ("conversation_audio", "transcript"),
                        ("customer_images", "identity"), ("financial_transactions", "is_fraud")):
        assert label not in view.arrow(name).column_names


# ---------------------------------------------------------------- use cases

@pytest.mark.parametrize("number", sorted(USE_CASES))
def test_use_case_passes_and_a_constant_fails(runs, splits, number):
    module, metric, threshold, direction = USE_CASES[number]
    assert spec_of(number)["direction"] == direction
    _, pred, truth = runs[number]
    keys = spec_of(number)["keys"]
    joined = truth.merge(pred, on=keys, validate="one_to_one")
    assert len(joined) == len(truth)
    value = metric(joined["label"], joined["prediction"])
    assert passes(value, threshold, direction), (number, value)
    from suite.tpcx_ai import quality
    best, const = quality.best_constant(spec_of(number)["metric"], joined["label"])
    assert quality.beats(spec_of(number)["metric"], value, best), (number, value, const, best)
    train_truth = module.truth(spec.MemoryData(splits["training"]))["label"]
    constants = [train_truth.mode()[0], joined["label"].mode()[0]]
    if number == 2:
        constants += ["", " ".join(" ".join(train_truth).split()[:1])]
    for constant in constants:
        fake = [constant] * len(joined)
        assert not passes(metric(joined["label"], fake), threshold, direction), (number, constant)


@pytest.mark.parametrize("number", sorted(USE_CASES))
def test_model_pickles_and_serve_has_keys_and_prediction(runs, splits, number):
    module = USE_CASES[number][0]
    model, pred, _ = runs[number]
    keys = spec_of(number)["keys"]
    assert list(pred.columns) == keys + ["prediction"]
    assert not pred.duplicated(keys).any()
    again = pickle.loads(pickle.dumps(model))
    params = spec_of(number)["params"]
    pred2 = module.serve(again, spec.MemoryData(splits["scoring"], hide_labels=True), params)
    assert pred2.equals(pred)


def test_uc06_trains_on_failing_drives_only_with_the_one_day_label(splits):
    df = splits["training"]["failures"].to_pandas()
    x, y = uc06.training_rows(df)
    failing = df.groupby("serial_number")["failure"].max()
    assert len(x) == df["serial_number"].isin(failing[failing == 1].index).sum()
    assert y.sum() == 2 * (failing == 1).sum()  # the failure day and the day before
    xo, yo = uc06.oversample(x, y, SEED)
    assert (yo == 1).sum() == (yo == 0).sum() and len(xo) == len(yo)


def test_yaml_describes_each_use_case():
    for number in USE_CASES:
        doc = spec_of(number)
        assert doc["use_case"] == number and doc["schema_version"] == 1
        assert set(doc["tables"]) <= set(signals.GROUP.schemas())
        assert isinstance(doc["differs"], str) and (doc["differs"] != "") == (number in (2, 6, 9))


# ---------------------------------------------------------------- leaks through keys and layout

def test_uc09_identity_is_not_a_formula_of_the_image_id(runs, splits):
    _, _, truth = runs[9]
    identities = signals.plan(SF, "scoring")["identities"]
    for leak in (truth["image_id"] % identities, (truth["image_id"] // 3) % identities):
        assert accuracy_score(truth["label"], leak) < 0.9 / 2


def test_uc06_labels_are_not_in_the_row_layout_or_the_serial(runs, splits):
    _, _, truth = runs[6]
    df = splits["scoring"]["failures"].to_pandas().merge(truth, on=["serial_number", "date"])
    last = df.groupby("serial_number")["date"].transform("max")
    disk = df["serial_number"].str[3:].astype(int)
    leaks = {
        "fails on its own last row": (df["date"] == last).astype(int),
        "ends before the collection's last day": (last < last.max()).astype(int),
        "golden-ratio serial formula": (np.modf((disk + 1) * 0.6180339887498949)[0] < 0.5).astype(int),
        "odd serial": (disk % 2).astype(int),
    }
    for name, pred in leaks.items():
        assert matthews_corrcoef(df["label"], pred) < 0.19, name
    train = splits["training"]["failures"].to_pandas()
    healthy = train.groupby("serial_number").filter(lambda g: g["failure"].max() == 0)
    assert healthy.groupby("serial_number")["date"].max().nunique() == 1  # a common last day
