"""The on-disk formats, read back by independent readers written here (not suite's own code)."""

import hashlib
import io
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.training.data import formats
from suite.storage.backend.posix import PosixBackend

# --------------------------------------------------------------------------- independent readers

_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c_py(data: bytes) -> int:
    """Table-driven CRC32C (Castagnoli, reflected polynomial 0x82F63B78), pure Python."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mask_py(crc: int) -> int:
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    return (rotated + 0xA282EAD8) % 2**32


def read_tfrecords(path) -> list[bytes]:
    """Every payload of a TFRecord file; asserts both CRCs of every record with crc32c_py."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(data):
        assert pos + 12 <= len(data), f"{path}: truncated header at {pos}"
        length = int.from_bytes(data[pos:pos + 8], "little")
        assert int.from_bytes(data[pos + 8:pos + 12], "little") == mask_py(crc32c_py(data[pos:pos + 8]))
        payload = data[pos + 12:pos + 12 + length]
        assert len(payload) == length, f"{path}: truncated payload at {pos}"
        footer = data[pos + 12 + length:pos + 16 + length]
        assert int.from_bytes(footer, "little") == mask_py(crc32c_py(payload)), f"{path}: payload CRC at {pos}"
        out.append(payload)
        pos += 16 + length
    return out


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(buf: bytes):
    """(field number, wire type, value) of a protobuf message; length-delimited values as bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
            assert len(value) == n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        yield number, wire, value


def parse_example(payload: bytes) -> dict:
    """tf.train.Example -> {name: bytes or [int]} following example.proto / feature.proto."""
    out = {}
    (number, _, features), = list(_fields(payload))
    assert number == 1                                       # Example.features
    for number, _, entry in _fields(features):
        assert number == 1                                   # Features.feature (map entry)
        parts = {n: v for n, _, v in _fields(entry)}
        name, feature = parts[1].decode(), parts[2]
        (kind, _, lst), = list(_fields(feature))
        if kind == 1:                                        # BytesList
            values = [v for _, _, v in _fields(lst)]
            assert len(values) == 1
            out[name] = values[0]
        elif kind == 3:                                      # Int64List (packed or not)
            ints = []
            for _, wire, v in _fields(lst):
                if wire == 0:
                    ints.append(v)
                else:
                    p = 0
                    while p < len(v):
                        x, p = _varint(v, p)
                        ints.append(x)
            out[name] = ints
        else:
            raise AssertionError(f"unexpected feature kind {kind}")
    return out


# --------------------------------------------------------------------------- CRC32C


def test_reference_crc_matches_the_standard_check_value():
    assert crc32c_py(b"123456789") == 0xE3069283
    assert crc32c_py(b"") == 0


def test_fast_crc32c_agrees_with_the_reference():
    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 64, 1000, 4099):
        data = rng.bytes(n)
        assert formats.crc32c(data) == crc32c_py(data)
    a, b = rng.bytes(300), rng.bytes(500)
    assert formats.crc32c(b, formats.crc32c(a)) == crc32c_py(a + b)          # incremental
    assert formats.crc32c(memoryview(np.frombuffer(a, np.uint8))) == crc32c_py(a)


def test_masked_crc_follows_tensorflow_mask():
    for crc in (0, 1, 0xE3069283, 0xFFFFFFFF, 0x12345678):
        assert formats.masked_crc(crc) == mask_py(crc)
    assert formats.masked_crc(0) == 0xA282EAD8


# --------------------------------------------------------------------------- TFRecord


def at(path):
    """(backend, name) of a file: the storage backend reads it."""
    return PosixBackend(path.parent), path.name


def _write(tmp_path, name, writer, *args, index=0, seed=7):
    path = tmp_path / name
    with PosixBackend(tmp_path).create(name, atomic=False) as out:
        sink = formats.Sink(out, formats.Content(seed), index)
        writer(sink, *args)
        sink.flush()
        out.commit()
    return path


def test_tfrecord_framing_crcs_and_example_payload(tmp_path):
    lengths = [64, 65, 127, 128, 200, 1000, 3000, 16411]
    path = _write(tmp_path, "a.tfrecord", formats.write_tfrecord, lengths)
    payloads = read_tfrecords(path)
    assert len(payloads) == len(lengths)
    assert path.stat().st_size == formats.tfrecord_size(lengths)
    for want, payload in zip(lengths, payloads):
        assert want - 2 <= len(payload) <= want               # sized to the drawn record length
        example = parse_example(payload)
        assert set(example) == {"image", "label", "size"}
        assert example["size"] == [len(example["image"])] and example["label"] == [0]
        if len(example["image"]) > 1000:
            assert len(set(example["image"])) == 256          # random bytes, not a constant fill


def _tf_example_class():
    """tensorflow.Example built from example.proto / feature.proto field numbers, parsed by Google's
    protobuf runtime: what TensorFlow's parser sees, without TensorFlow."""
    import google.protobuf as pb                   # the test extra installs protobuf
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="suite_test_example.proto", package="tensorflow", syntax="proto3")

    def message(name, *fields, nested=()):
        m = proto.message_type.add(name=name)
        for spec in fields:
            m.field.add(**spec)
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        return m

    rep = F.LABEL_REPEATED
    message("BytesList", dict(name="value", number=1, type=F.TYPE_BYTES, label=rep))
    message("FloatList", dict(name="value", number=1, type=F.TYPE_FLOAT, label=rep))
    message("Int64List", dict(name="value", number=1, type=F.TYPE_INT64, label=rep))
    feature = message("Feature", *[dict(name=n, number=i, type=F.TYPE_MESSAGE, type_name=f".tensorflow.{t}",
                                        label=F.LABEL_OPTIONAL, oneof_index=0)
                                   for i, n, t in ((1, "bytes_list", "BytesList"), (2, "float_list", "FloatList"),
                                                   (3, "int64_list", "Int64List"))])
    feature.oneof_decl.add(name="kind")
    entry = descriptor_pb2.DescriptorProto(name="FeatureEntry", options=descriptor_pb2.MessageOptions(map_entry=True))
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, type_name=".tensorflow.Feature", label=F.LABEL_OPTIONAL)
    message("Features", dict(name="feature", number=1, type=F.TYPE_MESSAGE, label=rep,
                             type_name=".tensorflow.Features.FeatureEntry"), nested=[entry])
    message("Example", dict(name="features", number=1, type=F.TYPE_MESSAGE, type_name=".tensorflow.Features",
                            label=F.LABEL_OPTIONAL))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    assert pb.__version__
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow.Example"))


def test_payload_parses_as_tf_train_example_with_googles_protobuf(tmp_path):
    example_class = _tf_example_class()
    lengths = [64, 300, 129, 20_000, 70_000]
    for want, payload in zip(lengths, read_tfrecords(_write(tmp_path, "p.tfrecord", formats.write_tfrecord, lengths))):
        example = example_class.FromString(payload)
        feature = example.features.feature
        assert sorted(feature) == ["image", "label", "size"]
        assert feature["image"].WhichOneof("kind") == "bytes_list"
        assert feature["size"].int64_list.value[:] == [len(feature["image"].bytes_list.value[0])]
        assert feature["label"].int64_list.value[:] == [0]
        assert example.ByteSize() == len(payload) and want - 2 <= len(payload) <= want


def test_example_layout_is_exact_or_just_under_for_every_length():
    short = 0
    for target in range(64, 20000, 7):
        prefix, image = formats.example_layout(target)
        total = len(prefix) + image
        assert target - 2 <= total <= target
        short += total != target
    assert short < 10                                         # only at varint-width boundaries


def test_tfrecord_content_spans_several_pool_pieces(tmp_path):
    big = formats.PIECE_BYTES * 2 + 12345
    path = _write(tmp_path, "big.tfrecord", formats.write_tfrecord, [big, 100])
    assert formats.check_tfrecord(*at(path), [big, 100], deep=True) is None
    data = path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    payload = data[12:12 + length]
    assert int.from_bytes(data[12 + length:16 + length], "little") == formats.masked_crc(formats.crc32c(payload))


def test_check_tfrecord_finds_truncation_and_corruption(tmp_path):
    lengths = [500, 600, 700]
    path = _write(tmp_path, "c.tfrecord", formats.write_tfrecord, lengths)
    assert formats.check_tfrecord(*at(path), lengths) is None
    data = bytearray(path.read_bytes())
    path.write_bytes(data[:-20])
    assert "truncated" in formats.check_tfrecord(*at(path), lengths)
    data[3] ^= 0xFF                                           # corrupt the first length
    path.write_bytes(data)
    assert "length CRC" in formats.check_tfrecord(*at(path), lengths)
    data[3] ^= 0xFF
    data[100] ^= 0x01                                         # corrupt payload bytes
    path.write_bytes(data)
    assert formats.check_tfrecord(*at(path), lengths) is None      # cheap mode: headers only
    assert "payload CRC" in formats.check_tfrecord(*at(path), lengths, deep=True)


def test_same_seed_and_index_same_bytes_other_index_other_bytes(tmp_path):
    a = _write(tmp_path, "a", formats.write_tfrecord, [5000] * 3, index=4)
    b = _write(tmp_path, "b", formats.write_tfrecord, [5000] * 3, index=4)
    c = _write(tmp_path, "c", formats.write_tfrecord, [5000] * 3, index=5)
    d = _write(tmp_path, "d", formats.write_tfrecord, [5000] * 3, index=4, seed=8)
    digest = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b, c, d)]
    assert digest[0] == digest[1] and len({digest[0], digest[2], digest[3]}) == 3


# --------------------------------------------------------------------------- npz


@pytest.mark.parametrize("record,samples", [(1, 1), (100, 1), (5000, 1), (4096, 3), (formats.PIECE_BYTES + 999, 1)])
def test_npz_loads_with_numpy_like_np_savez(tmp_path, record, samples):
    path = _write(tmp_path, "x.npz", formats.write_npz, record, samples)
    assert path.stat().st_size == formats.npz_size(record, samples)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None                            # every member's CRC32 verifies
        assert sorted(z.namelist()) == ["x.npy", "y.npy"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    with np.load(path) as npz:
        x, y = npz["x"], npz["y"]
    d1, d2, n = formats.npz_shape(record, samples)
    assert x.shape == (d1, d2, samples) and x.dtype == np.uint8 and abs(d1 * d2 - record) <= 2 * d1
    assert y.dtype == np.int64 and y.tolist() == [0] * samples
    ref = io.BytesIO()
    np.savez(ref, x=x, y=y)                                   # numpy writes the same members
    with zipfile.ZipFile(ref) as z, zipfile.ZipFile(path) as ours:
        for name in ("x.npy", "y.npy"):
            assert z.read(name) == ours.read(name)


# --------------------------------------------------------------------------- hdf5


def test_hdf5_opens_with_h5py(tmp_path):
    import h5py

    path = tmp_path / "r.hdf5"
    path.write_bytes(formats.hdf5_bytes(formats.Sink(None, formats.Content(1), 0), 10_000, 2))
    with h5py.File(path, "r") as f:
        records, labels = f["records"][()], f["labels"][()]
    assert records.shape == (2, 100, 100) and labels.tolist() == [0, 0]
    assert len(np.unique(records)) > 200 and not np.array_equal(records[0], records[1])
    assert formats.check_hdf5(*at(path), 10_000, 2) is None
    path.write_bytes(path.read_bytes()[:5000])
    assert "not a readable hdf5" in formats.check_hdf5(*at(path), 10_000, 2)


def test_sink_survives_many_small_puts_and_big_batches(tmp_path):
    path = tmp_path / "s"
    out = PosixBackend(tmp_path).create("s", atomic=False)
    sink = formats.Sink(out, formats.Content(3), 0)
    expect = bytearray()
    for i in range(3000):
        piece = struct.pack("<I", i)
        sink.put(piece)
        expect += piece
        if i % 500 == 0:
            for view in sink.random(formats.BATCH_BYTES // 3):
                expect += bytes(view)
    sink.flush()
    out.commit()
    assert path.read_bytes() == bytes(expect) and sink.written == len(expect)


@given(st.binary(max_size=4096), st.integers(0, 2**32 - 1))
@settings(max_examples=200, deadline=None)
def test_the_zip_crc32_is_zlibs_number_whichever_library_computes_it(data, start):
    """formats.crc32 (ISA-L's when the isal wheel is there) gives zlib's CRC-32, continued or not."""
    import zlib

    assert formats.crc32(data) == zlib.crc32(data)
    assert formats.crc32(memoryview(data), start) == zlib.crc32(data, start)
