"""Generation (chunk-parallel raw files) and load (raw -> parquet) on the toy table group."""

import hashlib

import pytest
import tpcx_toy

from suite.tpcx_ai import generate

from suite.tpcx_ai import load

from suite.tpcx_ai import spec

SF = 0.05


def digest_tree(root):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != generate.MANIFEST}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gen")
    reg = tpcx_toy.registry(tmp)
    lines = []
    stats = generate.generate(reg, SF, 7, tmp / "d1", processes=1, progress=lambda *a: lines.append(a))
    return reg, tmp, stats, lines


def test_same_bytes_for_one_and_two_processes(generated):
    reg, tmp, stats, lines = generated
    stats2 = generate.generate(reg, SF, 7, tmp / "d2", processes=2)
    one, two = digest_tree(tmp / "d1" / "raw"), digest_tree(tmp / "d2" / "raw")
    assert one == two and len(one) > 10
    assert stats.rows == stats2.rows and stats.bytes == stats2.bytes
    assert not list((tmp / "d2").rglob("*.tmp"))


def test_layout_stats_and_serving_without_labels(generated):
    reg, tmp, stats, lines = generated
    raw = tmp / "d1" / "raw"
    assert (raw / "training" / "toy_points" / "part-00000.csv").is_file()
    assert (raw / "training" / "toy_points" / "blob" / "00000-000000.pgm").read_bytes().startswith(b"P5")
    header = (raw / "serving" / "toy_points" / "part-00000.csv").read_text().splitlines()[0]
    assert "label" not in header and "target" not in header and "x" in header
    assert stats.rows == sum(tpcx_toy.rows(SF, s) for s in spec.SPLITS) + 9
    assert stats.rows_per_s > 0 and stats.mb_per_s > 0 and lines[-1][0] == lines[-1][1]
    manifest = generate.read_manifest(tmp / "d1")
    assert manifest["chunks"]["training"]["toy_points"]["chunks"] == list(range(tpcx_toy.chunks(SF, "training")))


def test_load_gives_the_generated_tables(generated):
    reg, tmp, _, _ = generated
    schemas = tpcx_toy.GROUP.schemas()
    for split in spec.SPLITS:
        st = load.load_split(tmp / "d1", split, schemas)
        assert st.rows > 0 and st.parquet_bytes > 0 and st.duration_s > 0
    want = spec.generate_split(tpcx_toy.GROUP, SF, "training", 7)
    got = load.ParquetData(tmp / "d1" / "training")
    assert got.arrow("toy_points").equals(want["toy_points"]) and got.arrow("toy_dim").equals(want["toy_dim"])
    serving = load.ParquetData(tmp / "d1" / "serving")
    assert "label" not in serving.arrow("toy_points").column_names
    scoring = load.ParquetData(tmp / "d1" / "scoring", hide_labels=True)
    assert scoring.table("toy_points").columns.tolist() == ["p_id", "x", "y", "cat", "blob"]
    with pytest.raises(KeyError, match="label"):
        scoring.arrow("toy_points", ["label"])


def test_bad_raw_data_is_a_one_line_error_naming_the_file(generated, tmp_path):
    reg, tmp, _, _ = generated
    import shutil
    d = tmp_path / "d"
    shutil.copytree(tmp / "d1" / "raw", d / "raw")
    part = d / "raw" / "training" / "toy_points" / "part-00001.csv"
    lines = part.read_text().splitlines()
    cols = lines[1].split(",")
    cols[1] = "abc"
    part.write_text("\n".join([lines[0], ",".join(cols)] + lines[2:]) + "\n")
    schemas = tpcx_toy.GROUP.schemas()
    with pytest.raises(load.DataError, match=r"part-00001.csv: column x: expected values of type double, got"):
        load.load_split(d, "training", schemas)
    part.write_text(lines[0].replace('"x",', "") + "\n")
    with pytest.raises(load.DataError, match=r"part-00001.csv: column x: expected a column of type double, got none"):
        load.load_split(d, "training", schemas)
    part.unlink()
    with pytest.raises(load.DataError, match=r"part-00001.csv: data: expected a generated chunk file, got no such file"):
        load.load_split(d, "training", schemas)
