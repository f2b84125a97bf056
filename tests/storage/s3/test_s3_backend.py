"""The S3 backend against the real local server (versitygw): names, listings, reads, multipart
writes, request counts; the location parser under Hypothesis."""

import argparse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.errors import SuiteError
from suite.storage.backend import s3io
from suite.storage.backend.s3stats import REQUESTS
from suite.storage.backend.select import ObjectLocation, as_location, backend_for, location


def test_a_write_is_invisible_until_commit_and_multipart_above_the_part_size(bucket, monkeypatch):
    monkeypatch.setattr(s3io, "PART_BYTES", 5 * 1024 * 1024)
    b = backend_for(None, f"s3://{bucket}/pre")
    data = bytes(range(256)) * (12 * 4096)           # 12 MiB: parts 5 + 5 + 2
    REQUESTS.reset()
    with b.create("train/big.bin") as w:
        w.write(data)
        w.patch(10, b"XY")
        with pytest.raises(FileNotFoundError):
            b.size("train/big.bin")
        w.commit()
    taken = REQUESTS.take()["counts"]
    assert taken["MPU"] == 2 and taken["PUT"] == 3         # create + complete; three parts
    want = data[:10] + b"XY" + data[12:]
    with b.open_read("train/big.bin") as h:              # sequential: one streamed GET
        buf, got, off = bytearray(1 << 20), bytearray(), 0
        while n := h.readinto_at(h.key, [buf], off):
            got += buf[:n]
            off += n
    assert bytes(got) == want and REQUESTS.take()["counts"]["GET"] == 1
    with b.open_read(f"s3://{bucket}/pre/train/big.bin", sequential=False) as h:   # a full URL, root ""
        assert h.read_at(4, 8) == want[8:12] and h.read_at(10, len(want) - 4) == want[-4:]
    assert REQUESTS.take()["counts"]["GET"] == 2          # two ranged GETs


def test_a_body_cut_mid_stream_resumes_with_a_ranged_get_and_is_counted(bucket, s3_server, monkeypatch):
    """A real proxy sends half of the first two GETs' bodies and closes: the sequential read (straight
    from the socket into the buffer) notices the short body and resumes from where it stopped."""
    from tests.storage.s3.s3_proxy import Throttle

    b = backend_for(None, f"s3://{bucket}/cut")
    data = bytes(range(251)) * 40000                   # about 10 MB, not a multiple of the buffer
    with b.create("obj") as w:
        w.write(data)
        w.commit()
    with Throttle(s3_server["env"]["AWS_ENDPOINT_URL"], every=10**9, cut_gets=2) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        s3io._CLIENTS.clear()
        try:
            REQUESTS.reset()
            got, buf, off = bytearray(), bytearray(3 << 20), 0
            with b.open_read("obj") as h:
                while n := h.readinto_at(h.key, [buf], off):
                    got += buf[:n]
                    off += n
            taken = REQUESTS.take()
        finally:
            s3io._CLIENTS.clear()
    assert bytes(got) == data and proxy.cut == 2
    assert taken["counts"]["GET"] == 3 and taken["retries"]["GET"] == 2


def test_a_server_gone_mid_read_is_an_error_naming_it_even_on_a_port_that_holds_416(bucket, monkeypatch):
    """An object read whose server has gone raises OSError naming the endpoint; it is never taken for
    the end of the object (416, InvalidRange), whatever digits its message holds (the endpoint's port,
    the object's name: here both): the error's status decides, not its words."""
    b = backend_for(None, f"s3://{bucket}/gone")
    with b.create("obj-416") as w:
        w.write(b"x" * 1000)
        w.commit()
    h = b.open_read("obj-416")
    assert h.size() == 1000
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:41600")
    s3io._CLIENTS.clear()
    try:
        with pytest.raises(OSError, match="obj-416 at .*: endpoint unreachable"):     # nothing listens on 41600
            h.readinto_at(h.key, [bytearray(4096)], 0)
    finally:
        s3io._CLIENTS.clear()


def test_reused_part_buffers_and_retried_bodies_send_exactly_each_objects_bytes(bucket, s3_server, monkeypatch):
    """Writers reuse this process's part buffers, and a body is that buffer (no copy): a smaller object
    after a larger one carries none of its bytes, and a PUT throttled by a real proxy (503 SlowDown) is
    sent again whole from its first byte."""
    import boto3

    from suite.storage.backend import s3write
    from tests.storage.s3.s3_proxy import Throttle

    monkeypatch.setattr(s3io, "PART_BYTES", 5 * 1024 * 1024)
    b = backend_for(None, f"s3://{bucket}/reuse")
    objects = {"a": bytes([1]) * (11 << 20), "b": bytes([2]) * 3000, "c": bytes(range(256)) * 30000}
    with Throttle(s3_server["env"]["AWS_ENDPOINT_URL"], every=2) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        s3io._CLIENTS.clear()
        try:
            REQUESTS.reset()
            for name, data in objects.items():
                with b.create(name) as w:
                    w.writev([memoryview(data)[:100], memoryview(data)[100:]])
                    w.patch(0, data[:1])
                    w.commit()
            taken = REQUESTS.take()
        finally:
            s3io._CLIENTS.clear()
    assert proxy.throttled >= 3 and taken["retries"]["PUT"] + taken["retries"]["MPU"] == proxy.throttled
    assert len(s3write._FREE) >= 2            # the buffers went back for the next writer
    plain = boto3.session.Session().client("s3", endpoint_url=s3_server["env"]["AWS_ENDPOINT_URL"])
    for name, data in objects.items():
        assert plain.get_object(Bucket=bucket, Key=f"reuse/{name}")["Body"].read() == data


def test_listing_sizes_prefixes_and_a_missing_prefix(bucket):
    b = backend_for("object", f"s3://{bucket}/p")
    for name, size in (("train/a/1.npz", 3), ("train/b.npz", 5), ("generation_log.json", 2)):
        with b.create(name) as w:
            w.write(b"x" * size)
            w.commit()
    assert [(e.name, e.size_bytes) for e in b.list("train")] == [("train/a/1.npz", 3), ("train/b.npz", 5)]
    assert [(e.name, e.is_prefix) for e in b.list("", recursive=False)] == [("generation_log.json", False),
                                                                            ("train", True)]
    with pytest.raises(FileNotFoundError):
        b.list("valid")
    b.remove("train/b.npz")
    b.remove("train/b.npz")                               # absent: no error
    assert b.locate("train/a/1.npz") == f"s3://{bucket}/p/train/a/1.npz"


def test_an_aborted_write_leaves_nothing(bucket, monkeypatch):
    monkeypatch.setattr(s3io, "PART_BYTES", 5 * 1024 * 1024)
    b = backend_for(None, f"s3://{bucket}")
    with pytest.raises(RuntimeError):
        with b.create("half.bin") as w:
            w.write(b"y" * (11 * 1024 * 1024))             # a multipart upload begun
            raise RuntimeError("interrupted")
    with pytest.raises(FileNotFoundError):
        b.list("")
    import boto3
    assert not boto3.session.Session().client("s3").list_multipart_uploads(Bucket=bucket).get("Uploads")


def test_the_evidence_names_the_endpoint_host_and_no_key(bucket, s3_server):
    ev = backend_for(None, f"s3://{bucket}/x").evidence()
    assert ev["endpoint_host"].startswith("127.0.0.1:") and ev["bucket"] == bucket and ev["prefix"] == "x"
    assert ev["library"]["name"] == "boto3" and ev["library"]["version"] and ev["library"]["payload_signing"] is False
    text = repr(ev)
    assert s3_server["env"]["AWS_SECRET_ACCESS_KEY"] not in text and s3_server["env"]["AWS_ACCESS_KEY_ID"] not in text


def test_other_schemes_are_refused_and_local_paths_stay_paths():
    assert isinstance(location("s3://b/p/"), ObjectLocation) and location("s3://b/p/") == "s3://b/p"
    assert location("rel/dir") == Path("rel/dir")
    for bad in ("ftp://b/p", "file:///tmp/x", "gs://b", "s3://", "s3://user:pw@b/p", "s3://b/p?x=1"):
        with pytest.raises(argparse.ArgumentTypeError):
            location(bad)
    with pytest.raises(TypeError):
        Path(as_location("s3://b/p"))                      # never a local file under an s3 location
    assert as_location("s3://b/p") / "train" == "s3://b/p/train"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_location_text_is_a_path_an_object_location_or_one_line_refusal(text):
    try:
        got = as_location(text)
    except SuiteError as exc:
        assert "\n" not in str(exc) or "\n" in text
        return
    except ValueError:          # a NUL in a path: pathlib's own refusal (argparse reports it)
        assert "\x00" in text
        return
    if isinstance(got, ObjectLocation):
        assert got.startswith("s3://") and s3io.split_url(got)[0]
    else:
        assert isinstance(got, Path) and "://" not in text
