"""The text table group (review, marketplace, product_rating) and use cases UC04, UC05, UC07."""

import importlib
import pickle
from pathlib import Path

import numpy as np
import pytest

from suite.tpcx_ai import spec
from suite.tpcx_ai.tables import text

SF = 0.01
SEED = 7
ROOT = Path(__file__).resolve().parents[2]
THRESHOLDS = {4: ("f1_score", 0.65, "higher"), 5: ("mean_squared_log_error", 0.5, "lower"),
              7: ("median_absolute_error", 1.8, "lower")}


def _metric(name, label, prediction):
    from sklearn import metrics

    if name == "f1_score":
        return metrics.f1_score(label, prediction, pos_label=1)
    return getattr(metrics, name)(label, prediction)


def _passes(number, value):
    _, threshold, direction = THRESHOLDS[number]
    return value >= threshold if direction == "higher" else value <= threshold


def _definition(number):
    import yaml

    return yaml.safe_load((ROOT / "workloads" / "tpcx-ai" / f"uc{number:02d}.yaml").read_text())


@pytest.fixture(scope="module")
def splits():
    return {split: spec.generate_split(text.GROUP, SF, split, SEED) for split in ("training", "scoring")}


@pytest.fixture(scope="module")
def fitted(splits):
    """Each use case trained on the training split with its YAML params: (definition, module, model)."""
    out = {}
    for number in (4, 5, 7):
        definition = _definition(number)
        module = importlib.import_module(f"suite.tpcx_ai.usecases.uc{number:02d}")
        model = module.train(spec.MemoryData(splits["training"]), definition["params"], SEED)
        out[number] = (definition, module, model)
    return out


def _tables_equal(a, b):
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name


def test_same_chunk_same_tables_other_seed_other_tables():
    first = text.generate(SF, "training", SEED, 0)
    _tables_equal(first, text.generate(SF, "training", SEED, 0))
    other = text.generate(SF, "training", SEED + 1, 0)
    assert not first["review"].column("text").equals(other["review"].column("text"))
    assert not first["product_rating"].column("rating").equals(other["product_rating"].column("rating"))


def test_chunks_do_not_depend_on_order_or_cached_population(monkeypatch):
    monkeypatch.setattr(text, "CHUNK_ROWS", 3000)
    k = text.chunks(SF, "training")
    assert k >= 3
    in_order = [text.generate(SF, "training", SEED, c) for c in range(k)]
    text._vocabulary.cache_clear()
    text._rating_population.cache_clear()
    reversed_order = [text.generate(SF, "training", SEED, c) for c in reversed(range(k))][::-1]
    for a, b in zip(in_order, reversed_order):
        _tables_equal(a, b)
    rows = text.table_rows(SF, "training")
    for name, count in rows.items():
        assert sum(part[name].num_rows for part in in_order) == count
    ids = np.concatenate([part["review"].column("review_id").to_numpy() for part in in_order])
    assert np.array_equal(ids, np.arange(rows["review"]))


def _chunk(args):
    sf, split, seed, chunk, chunk_rows = args
    text.CHUNK_ROWS = chunk_rows
    return text.generate(sf, split, seed, chunk)


def test_chunks_made_by_two_processes_equal_one_process(monkeypatch):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    monkeypatch.setattr(text, "CHUNK_ROWS", 4000)
    k = text.chunks(SF, "training")
    one = [text.generate(SF, "training", SEED, c) for c in range(k)]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        two = list(pool.map(_chunk, [(SF, "training", SEED, c, 4000) for c in range(k)]))
    for a, b in zip(one, two):
        _tables_equal(a, b)


def test_schema_labels_and_value_ranges(splits):
    schemas = text.schemas()
    customers, products = text.population_size(SF)
    for split, tables in splits.items():
        for name, table in tables.items():
            assert table.schema.equals(schemas[name], check_metadata=True), (split, name)
            assert table.num_rows == text.table_rows(SF, split)[name]
        labels = {name: [f.name for f in schemas[name] if spec.is_label(f)] for name in schemas}
        assert labels == {"review": ["spam"], "marketplace": ["price"], "product_rating": ["rating"]}
        spam = tables["review"].column("spam").to_numpy()
        assert 0.1 < spam.mean() < 0.3  # a minority class
        ratings = tables["product_rating"].to_pandas()
        assert ratings["rating"].between(1, 5).all()
        assert ratings["user_id"].between(0, customers - 1).all()
        assert ratings["product_id"].between(0, products - 1).all()
        assert (tables["marketplace"].column("price").to_numpy() >= 1.0).all()
        assert min(len(t) for t in tables["review"].column("text").to_pylist()) > 0


def test_serving_and_scoring_are_about_a_tenth_of_training():
    for split in ("serving", "scoring"):
        for name, rows in text.table_rows(1.0, split).items():
            assert rows == round(text.table_rows(1.0, "training")[name] * spec.SERVING_FRACTION)
    assert text.table_rows(1.0, "training")["marketplace"] == round(spec.row_drivers(1.0)["marketplace"])


def test_yaml_definitions_match_modules():
    for number in (4, 5, 7):
        definition = _definition(number)
        module = importlib.import_module(f"suite.tpcx_ai.usecases.uc{number:02d}")
        assert definition["use_case"] == number
        assert definition["keys"] == module.KEYS
        assert definition["metric"] == THRESHOLDS[number][0]
        assert definition["direction"] == THRESHOLDS[number][2]
        assert set(definition["tables"]) <= set(text.schemas())
    assert _definition(4)["differs"] == ""
    assert "TensorFlow" in _definition(5)["differs"] and "surprise" in _definition(7)["differs"]


@pytest.mark.parametrize("number", [4, 5, 7])
def test_use_case_passes_and_a_constant_fails(number, splits, fitted):
    definition, module, model = fitted[number]
    scoring = splits["scoring"]
    predicted = module.serve(model, spec.MemoryData(scoring, hide_labels=True), definition["params"])
    truth = module.truth(spec.MemoryData(scoring))
    assert list(predicted.columns) == module.KEYS + ["prediction"]
    assert list(truth.columns) == module.KEYS + ["label"]
    assert not predicted.duplicated(module.KEYS).any()
    assert len(predicted) == len(truth)
    joined = truth.merge(predicted, on=module.KEYS, validate="one_to_one")
    assert len(joined) == len(truth)
    metric = definition["metric"]
    value = _metric(metric, joined["label"], joined["prediction"])
    assert _passes(number, value), (metric, value)
    label = joined["label"]
    constants = [0, 1] if number == 4 else [label.mean(), label.median(), label.mode().iloc[0]]
    for constant in constants:
        const_value = _metric(metric, label, np.full(len(label), constant))
        assert not _passes(number, const_value), (metric, constant, const_value)
    from suite.tpcx_ai import quality
    best, const = quality.best_constant(metric, label)
    assert quality.beats(metric, value, best), (metric, value, const, best)  # tpcxai-beats-constant


@pytest.mark.parametrize("number", [4, 5, 7])
def test_model_pickles(number, splits, fitted):
    definition, module, model = fitted[number]
    view = spec.MemoryData(splits["scoring"], hide_labels=True)
    again = pickle.loads(pickle.dumps(model))
    a = module.serve(model, view, definition["params"])
    b = module.serve(again, view, definition["params"])
    assert a.equals(b)


def test_serve_never_reads_labels(splits, fitted):
    view = spec.MemoryData(splits["scoring"], hide_labels=True)
    for name, label in (("review", "spam"), ("marketplace", "price"), ("product_rating", "rating")):
        assert label not in view.arrow(name).column_names
    definition, module, model = fitted[7]
    unknown = module.predict(model, np.array([-1, 10 ** 9]), np.array([0, 10 ** 9]))
    assert np.all((unknown >= 1) & (unknown <= 5))


def test_uc07_scatter_add_matches_numpy_add_at():
    from suite.tpcx_ai.usecases.uc07 import _scatter_add

    rng = np.random.default_rng(0)
    for rows, width in ((5000, 4), (50, 4), (50, 1), (5000, 1)):
        target = rng.normal(size=(rows, width)).squeeze()
        idx = rng.integers(0, rows, 256)
        update = rng.normal(size=(256, width)).squeeze()
        a, b = target.copy(), target.copy()
        _scatter_add(a, idx, update)
        np.add.at(b, idx, update)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
