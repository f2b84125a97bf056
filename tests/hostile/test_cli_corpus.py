"""The bad-input corpus for the commands (beside tests/training/check/test_checker_bad_input.py for trees):
every case ends in a one-line error naming what is wrong and exit 2 -- never a traceback, never
a write outside the given paths. Cases are data: (id, files to create, argv, needle)."""

import json
import os

import pytest

import paths

NINES = "9" * 400
GOOD_FDR = {"schema_version": 1, "kind": "tpcx-ai-fdr", "kit_version": "1.0.2", "availability_date": None,
            "currency": "USD", "total_price": 1000, "scale_factor": 1, "streams": 2, "load_time_s": 1.0,
            "training_s": [1.0] * 10, "serving_1_s": [1.0] * 10, "serving_2_s": [1.0] * 10,
            "throughput_elapsed_s": 20.0}


def fdr_json(**change):
    return json.dumps({**GOOD_FDR, **change})


def fdr_raw(field, raw):
    """The good FDR as JSON text with one field's value spelled raw (NaN, 1e999, 400 digits, ...)."""
    doc = dict(GOOD_FDR, **{field: "@@"})
    return json.dumps(doc).replace('"@@"', raw)


def laughs(depth=9):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghijk"[:depth - 1]:
        lines.append(f"{name}: &{name} [" + ",".join(["*" + prev] * 9) + "]")
        prev = name
    return "\n".join(lines) + "\n"


DATASIZE = ["datasize", "--workload", "unet3d", "--accelerator-type", "h100", "--client-hosts", "1"]
SIZE_CASES = [
    ("bare-number", "128", "with a unit"), ("negative", "-1GiB", "with a unit"), ("zero", "0GiB", "positive"),
    ("nan", "nanGiB", "with a unit"), ("inf", "infGiB", "with a unit"), ("exp", "1e3GiB", "with a unit"),
    ("400-digits", NINES + "GiB", "400-digit"), ("over-1EiB", "2000PiB", "at most 1 EiB"),
    ("unknown-unit", "5XB", "with a unit"), ("lower-gib", "5gib", "with a unit"), ("empty", "", "with a unit"),
    ("two-units", "5GiBGiB", "with a unit"), ("comma", "1,5GiB", "with a unit"), ("hex", "0x10GiB", "with a unit"),
    ("unicode-digit", "\u0665GiB", "with a unit"), ("control", "5\x1bGiB", "with a unit"),
]
COUNT_CASES = [
    ("zero", "0"), ("negative", "-3"), ("400-digits", NINES), ("float", "1.5"), ("text", "many"),
    ("over-max", "1000000001"), ("empty", ""), ("nan", "nan"), ("space", "1 0"),
]
PARAM_CASES = [
    ("nan", "dataset.record_length=nan", "finite"), ("inf", "dataset.record_length=inf", "finite"),
    ("-inf", "dataset.record_length=-inf", "finite"), ("1e400", "dataset.record_length=1e400", "finite"),
    ("huge-int", "dataset.num_samples_per_file=" + NINES, "expected integer"),
    ("over-max-samples", "dataset.num_samples_per_file=1000000000000", "maximum"),
    ("huge-file", "dataset.num_samples_per_file=1000000", "up to 64 GiB"),
    ("negative-len", "dataset.record_length=-5", "minimum"), ("zero-batch", "reader.batch_size=0", "minimum"),
    ("bool-garbage", "reader.odirect=maybe", "boolean"), ("unknown-key", "reader.nope=1", "unknown key"),
    ("no-equals", "reader.batch_size", "no '='"), ("enum", "dataset.format=zip", "dataset.format"),
    ("threads", "reader.read_threads=100000", "maximum"), ("compute-time", "train.computation_time=1e9", "maximum"),
    ("seed-negative", "reader.seed=-1", "minimum"), ("text-int", "reader.batch_size=ten", "expected integer"),
]
FDR_CASES = [
    ("sf-nan", "x.json", fdr_raw("scale_factor", "NaN"), "finite"),
    ("sf-inf", "x.json", fdr_raw("scale_factor", "Infinity"), "finite"),
    ("sf-1e308", "x.json", fdr_raw("scale_factor", "1e308"), "up to"),
    ("sf-400-digits", "x.json", fdr_raw("scale_factor", NINES), "digit"),
    ("sf-zero", "x.json", fdr_json(scale_factor=0), "positive"),
    ("sf-negative", "x.json", fdr_json(scale_factor=-1), "positive"),
    ("sf-tiny", "x.json", fdr_json(scale_factor=1e-300), "AIUCpm"),
    ("streams-400-digits", "x.json", fdr_raw("streams", NINES), "streams"),
    ("streams-negative-huge", "x.json", fdr_raw("streams", "-" + NINES), "streams"),
    ("streams-one", "x.json", fdr_json(streams=1), "at least 2"),
    ("streams-float", "x.json", fdr_json(streams=2.5), "streams"),
    ("streams-bool", "x.json", fdr_json(streams=True), "streams"),
    ("tld-huge", "x.json", fdr_json(load_time_s=1e300), "load_time_s"),
    ("tld-string", "x.json", fdr_json(load_time_s="fast"), "load_time_s"),
    ("tld-negative", "x.json", fdr_json(load_time_s=-1), "load_time_s"),
    ("tld-sub-ms", "x.json", fdr_json(load_time_s=0.0001), "load_time_s"),
    ("training-huge", "x.json", fdr_json(training_s=[1e300] * 10), "training_s"),
    ("training-eleven", "x.json", fdr_json(training_s=[1.0] * 11), "training_s"),
    ("training-nan", "x.json", fdr_raw("training_s", "[" + ",".join(["NaN"] * 10) + "]"), "training_s"),
    ("price-inf", "x.json", fdr_raw("total_price", "Infinity"), "total_price"),
    ("price-zero", "x.json", fdr_json(total_price=0), "total_price"),
    ("currency-lower", "x.json", fdr_json(currency="usd"), "currency"),
    ("kind-unknown", "x.json", fdr_json(kind="other"), "kind"),
    ("unknown-key", "x.json", fdr_json(surprise=1), "surprise"),
    ("deep-json", "x.json", "[" * 5000 + "]" * 5000, "x.json"),
    ("digits-json", "x.json", '{"schema_version": ' + "1" * 5001 + "}", "x.json"),
    ("bom-json", "x.json", "\ufeff" + fdr_json(streams=1), "at least 2"),
    ("not-utf8", "x.json", b"\xff\xfe{}", "UTF-8"),
    ("truncated", "x.json", fdr_json()[:40], "valid JSON"),
    ("empty", "x.json", "", "valid JSON"),
    ("array", "x.json", "[1, 2]", "x.json"),
    ("deep-yaml", "x.yaml", "a:\n" + "".join("  " * i + "- \n" for i in range(1, 3000)), "x.yaml"),
    ("flow-deep-yaml", "x.yaml", "[" * 5000 + "]" * 5000, "x.yaml"),
    ("laughs-yaml", "x.yaml", laughs(), "aliases expanded"),
    ("python-tag", "x.yaml", "!!python/object/apply:os.system ['echo pwned']\n", "x.yaml"),
    ("yaml-tabs", "x.yaml", "a:\n\t- 1\n", "x.yaml"),
    ("yaml-scalar", "x.yaml", "just text\n", "x.yaml"),
    ("yaml-1e308-string", "x.yaml", "scale_factor: 1e308\n", "x.yaml"),
    ("csv-bad-header", "x.csv", "a,b\n1,2\n", "CSV header"),
    ("csv-huge-cell", "x.csv", "field,value\nscale_factor," + "1" * 140_000 + "\n", "x.csv"),
    ("csv-stray-quote", "x.csv", 'field,value\n"scale_factor,1\n', "x.csv"),
    ("csv-cr", "x.csv", "field,value\r\nscale_factor,\r1\n", "x.csv"),
    ("csv-uc-text", "x.csv", "field,use_case,value\ntraining_s,one,1\n", "use_case"),
    ("csv-digits", "x.csv", "field,value\nstreams," + "9" * 5001 + "\n", "streams"),
    ("csv-dup", "x.csv", "field,value\nstreams,2\nstreams,3\n", "second one"),
    ("suffix", "x.txt", "streams: 2\n", "file kind"),
]


def one_line_exit_2(code, err, needle):
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert needle.lower() in err.lower(), err


@pytest.mark.parametrize("case", SIZE_CASES, ids=[c[0] for c in SIZE_CASES])
def test_sizes(run_cli, case):
    _, text, needle = case
    code, _, err = run_cli(*DATASIZE, "--accelerators", "1", f"--host-memory={text}")
    one_line_exit_2(code, err, needle)


@pytest.mark.parametrize("case", COUNT_CASES, ids=[c[0] for c in COUNT_CASES])
@pytest.mark.parametrize("option", ["--accelerators", "--client-hosts"])
def test_counts(run_cli, case, option):
    argv = {"--accelerators": "1", "--client-hosts": "1"}
    argv[option] = case[1]
    code, _, err = run_cli("datasize", "--workload", "unet3d", "--accelerator-type", "h100", "--host-memory", "1GiB",
                           f"--accelerators={argv['--accelerators']}", f"--client-hosts={argv['--client-hosts']}")
    one_line_exit_2(code, err, option)


@pytest.mark.parametrize("case", PARAM_CASES, ids=[c[0] for c in PARAM_CASES])
def test_params(run_cli, tmp_path, case):
    _, param, needle = case
    code, _, err = run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path / "d", "--files", "2",
                           f"--param={param}")
    one_line_exit_2(code, err, needle)
    assert not (tmp_path / "d").exists() or not any((tmp_path / "d").rglob("*.tfrecord"))


@pytest.mark.parametrize("seed", ["-1", NINES, "4294967296", "1.5", "x"])
def test_seeds(run_cli, tmp_path, seed):
    code, _, err = run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path / "d", "--files", "2",
                           f"--seed={seed}")
    one_line_exit_2(code, err, "--seed")


@pytest.mark.parametrize("case", FDR_CASES, ids=[c[0] for c in FDR_CASES])
@pytest.mark.parametrize("command", ["metrics", "report"])
def test_fdr_files(run_cli, tmp_path, case, command):
    _, name, content, needle = case
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    argv = [command, path] + (["--out", tmp_path / "out"] if command == "report" else [])
    code, out, err = run_cli(*argv)
    one_line_exit_2(code, err, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]   # a refused report leaves no --out


def test_metrics_json_is_strict(run_cli, tmp_path):
    tree = paths.DATA / "suite-run" / "unet3d-h100"
    code, out, _ = run_cli("metrics", tree, "--format", "json")
    assert code == 0
    json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))


def test_check_json_is_strict_with_nan_in_a_summary(run_cli, tmp_path):
    import shutil

    tree = tmp_path / "t"
    shutil.copytree(paths.DATA / "check" / "valid" / "dlio-unet3d-h100", tree / "dlio-unet3d-h100")
    summary = tree / "dlio-unet3d-h100" / "run1" / "summary.json"
    doc = json.loads(summary.read_text())
    doc["metric"]["train_au_percentage"][0] = float("nan")
    summary.write_text(json.dumps(doc))
    code, out, _ = run_cli("check", tree, "--format", "json")
    json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))


def test_corpus_size():
    cases = len(SIZE_CASES) + 2 * len(COUNT_CASES) + len(PARAM_CASES) + 5 + 2 * len(FDR_CASES) + 2
    assert cases >= 100
