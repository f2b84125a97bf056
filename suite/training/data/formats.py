"""On-disk formats of the training data: TFRecord, npz, JPEG and hdf5, written without TensorFlow.

Content: every process holds one seeded pool of random 64-bit words (POOL_BYTES); a record's
bytes are pool slices at seeded offsets XOR-ed with a seeded 64-bit key per slice, written into
a reused scratch buffer and handed to a storage backend writer (suite.storage.backend) in large
`writev` batches (no per-record copies, no per-record allocation); this module opens no file
itself. The offsets and keys come from a per-file generator seeded with (seed, file index), so a
file's bytes do not depend on how many processes or ranks wrote it.

- TFRecord: per record uint64 LE length, masked CRC32C(length), payload, masked CRC32C(payload);
  the payload is a serialized tf.train.Example {"label": int64, "size": int64, "image": bytes}
  whose total length is the drawn record length (the image absorbs the protobuf overhead).
- npz: a stored (uncompressed) zip64 archive holding x.npy (uint8, shape (d1, d2, samples), DLIO's
  layout) and y.npy (int64 labels), exactly what np.savez writes and numpy.load reads.
- jpeg (MLPerf Storage v3.0 retinanet, one sample per file): a real baseline JPEG of exactly the
  drawn record length. Per size class (an eighth of an octave) a few noise images are encoded once
  with Pillow (jpeg_base: about three quarters of the class's smallest size, so decoding costs about
  what an image of that size costs); each file is SOI, the base's APP0, COM segments of fresh seeded random
  bytes up to the exact length (a decoder skips comments; they make every file distinct), then the
  rest of the base. Pillow, and so DLIO's PIL reader, opens it.
- parquet (flux, dlrm): suite.training.data.parquet (pyarrow, the workload's columns and row groups).
- hdf5 (open division): h5py, datasets "records" (samples, d1, d2) uint8 and "labels", built in
  memory (hdf5_bytes) and written whole.
"""

import math
import struct
import zlib
from functools import lru_cache

import numpy as np

EXTENSIONS = {"npz": "npz", "tfrecord": "tfrecord", "hdf5": "hdf5", "jpeg": "jpeg", "parquet": "parquet"}
POOL_BYTES = 64 * 1024 * 1024       # random words shared by all records of a process
PIECE_BYTES = 1024 * 1024           # largest slice taken from the pool at once (cache-sized)
BATCH_BYTES = 1024 * 1024           # bytes queued before one writev (fio's --bs=1M)
MAX_IOV = 512
_POOL_WORDS, _PIECE_WORDS = POOL_BYTES // 8, PIECE_BYTES // 8
_SCRATCH_WORDS = (BATCH_BYTES + PIECE_BYTES) // 8

# --------------------------------------------------------------------------- CRC32C


def crc32c(data, value: int = 0) -> int:
    """CRC32C (Castagnoli) of `data`, continuing from `value`; C / SSE4.2 via the crc32c wheel."""
    import crc32c as _c

    return _c.crc32c(data, value)


_CRC32: list = []


def crc32(data, value: int = 0) -> int:
    """zip's CRC-32 of `data`, continuing from `value`: ISA-L's (carry-less multiply: 0.02 ms per MB here,
    zlib's 0.25, a third of making an npz file) when the isal wheel is there (the s3 extra), else zlib's.
    The same number either way."""
    if not _CRC32:
        try:
            from isal.isal_zlib import crc32 as fast
        except ImportError:
            fast = zlib.crc32
        _CRC32.append(fast)
    return _CRC32[0](data, value)


def masked_crc(crc: int) -> int:
    """TFRecord's mask: rotate right by 15 and add 0xa282ead8, modulo 2^32."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# --------------------------------------------------------------------------- content


class Content:
    """The seeded random pool of one process (built once, read-only afterwards)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.pool = np.random.SFC64(seed).random_raw(_POOL_WORDS).astype(np.uint64, copy=False)
        self.scratch = np.empty(_SCRATCH_WORDS, dtype=np.uint64)

    def file_rng(self, index: int):
        return np.random.SFC64([self.seed, index])


class Sink:
    """Sequential writer of one file: small byte strings and random pieces, batched into the backend
    writer's writev (`writer` None: content only, for hdf5_bytes)."""

    def __init__(self, writer, content: Content, index: int):
        self.writer, self.content, self.rng = writer, content, content.file_rng(index)
        self.iov: list = []
        self.queued = 0       # bytes in self.iov
        self.words = 0        # scratch words in use
        self.written = 0      # bytes handed to the kernel

    def put(self, data: bytes) -> None:
        self.iov.append(data)
        self.queued += len(data)
        if self.queued >= BATCH_BYTES or len(self.iov) >= MAX_IOV:
            self.flush()

    def random(self, nbytes: int, queue: bool = True):
        """Yield memoryviews that together hold `nbytes` fresh bytes; use each before the next.

        With queue=True the pieces are also queued for writing (in order); else they are scratch only.
        """
        scratch, pool = self.content.scratch, self.content.pool
        while nbytes > 0:
            size = min(nbytes, PIECE_BYTES)
            words = (size + 7) // 8
            if not queue:
                self.flush()
            elif self.words + words > _SCRATCH_WORDS or len(self.iov) >= MAX_IOV:
                self.flush()
            raw = self.rng.random_raw(2)
            start = int(raw[0] % np.uint64(_POOL_WORDS - words + 1))
            out = scratch[self.words:self.words + words]
            np.bitwise_xor(pool[start:start + words], raw[1], out=out)
            view = memoryview(out).cast("B")[:size]
            nbytes -= size
            if queue:
                self.words += words
                self.iov.append(view)
                self.queued += size
            yield view
            if self.queued >= BATCH_BYTES:
                self.flush()

    def flush(self) -> None:
        iov = self.iov
        writev = self.writer.writev if iov else None
        while iov:
            done = writev(iov[:1024])
            self.written += done
            while iov and done >= len(iov[0]):
                done -= len(iov.pop(0))
            if done:
                iov[0] = memoryview(iov[0])[done:]
        self.queued = self.words = 0


# --------------------------------------------------------------------------- protobuf / TFRecord


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int64_feature(name: str, value: int) -> bytes:
    int64_list = _field(1, _varint(value))                 # Int64List.value, packed
    feature = _field(3, int64_list)                         # Feature.int64_list
    return _field(1, _field(1, name.encode()) + _field(2, feature))   # Features.feature map entry


def example_prefix(image_bytes: int, label: int = 0) -> bytes:
    """The serialized tf.train.Example up to the image bytes, which come last."""
    image_head = _varint(1 << 3 | 2) + _varint(image_bytes)            # BytesList.value header
    bytes_list_len = len(image_head) + image_bytes
    feature_head = _varint(1 << 3 | 2) + _varint(bytes_list_len)        # Feature.bytes_list
    feature_len = len(feature_head) + bytes_list_len
    key = _field(1, b"image")
    entry_head = key + _varint(2 << 3 | 2) + _varint(feature_len)
    entry_len = len(entry_head) + feature_len
    image_entry_head = _varint(1 << 3 | 2) + _varint(entry_len) + entry_head
    small = _int64_feature("label", label) + _int64_feature("size", image_bytes)
    features_len = len(small) + len(image_entry_head) + len(feature_head) + len(image_head) + image_bytes
    return (_varint(1 << 3 | 2) + _varint(features_len) + small + image_entry_head
            + feature_head + image_head)


@lru_cache(maxsize=65536)
def example_layout(record_bytes: int) -> tuple[bytes, int]:
    """(prefix, image_bytes) of the largest Example whose length is <= record_bytes."""
    n = max(0, record_bytes - len(example_prefix(record_bytes)))
    while n > 0 and len(example_prefix(n)) + n > record_bytes:
        n -= 1
    while len(example_prefix(n + 1)) + n + 1 <= record_bytes:
        n += 1
    return example_prefix(n), n


def tfrecord_payload_bytes(record_bytes: int) -> int:
    prefix, image = example_layout(int(record_bytes))
    return len(prefix) + image


def tfrecord_header(payload_bytes: int) -> bytes:
    length = struct.pack("<Q", payload_bytes)
    return length + struct.pack("<I", masked_crc(crc32c(length)))


def write_tfrecord(sink: Sink, record_lengths) -> None:
    for record in record_lengths:
        prefix, image = example_layout(int(record))
        sink.put(tfrecord_header(len(prefix) + image) + prefix)
        crc = crc32c(prefix)
        for piece in sink.random(image):
            crc = crc32c(piece, crc)
        sink.put(struct.pack("<I", masked_crc(crc)))


def tfrecord_size(record_lengths) -> int:
    return sum(16 + tfrecord_payload_bytes(int(r)) for r in record_lengths)


def check_tfrecord(backend, name: str, record_lengths, deep: bool = False) -> str | None:
    """None when the framing of `name` (read through `backend`) matches the expected records, else
    what is wrong. Cheap mode reads the 12-byte header of every record; deep mode also verifies
    every payload CRC."""
    with backend.open_read(name, sequential=False) as f:
        offset = 0
        for i, record in enumerate(record_lengths):
            expected = tfrecord_payload_bytes(int(record))
            head = f.read_at(12, offset)
            if len(head) < 12:
                return f"record {i}: truncated header at byte {offset}"
            (length,), (crc,) = struct.unpack("<Q", head[:8]), struct.unpack("<I", head[8:])
            if crc != masked_crc(crc32c(head[:8])):
                return f"record {i}: length CRC mismatch at byte {offset}"
            if length != expected:
                return f"record {i}: length {length}, expected {expected}"
            if deep:
                body = f.read_at(length + 4, offset + 12)
                if len(body) < length + 4:
                    return f"record {i}: truncated payload"
                if struct.unpack("<I", body[length:])[0] != masked_crc(crc32c(body[:length])):
                    return f"record {i}: payload CRC mismatch"
            offset += 16 + length
        size = f.size()
    if size != offset:
        return f"{'truncated' if size < offset else 'trailing bytes'}: size {size}, expected {offset}"
    return None


# --------------------------------------------------------------------------- npz (stored zip64)

_LOCAL = struct.Struct("<IHHHHHIIIHH")
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
_ZIP64_END = struct.Struct("<IQHHIIQQQQ")
_ZIP64_LOCATOR = struct.Struct("<IIQI")
_END = struct.Struct("<IHHHHIIH")
_DOS_DATE = (0 << 9) | (1 << 5) | 1        # 1980-01-01, as np.savez / zipfile write
_FFFF = 0xFFFFFFFF


def npz_shape(record_bytes: int, samples: int) -> tuple[int, int, int]:
    """DLIO's (dim1, dim2, samples) uint8 layout with dim1 x dim2 as close to record_bytes as fits."""
    d1 = max(1, math.isqrt(int(record_bytes)))
    return d1, max(1, int(record_bytes) // d1), samples


def _npy_header(dtype: str, shape: tuple) -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _local_header(name: bytes, crc: int, size: int) -> bytes:
    return (_LOCAL.pack(0x04034B50, 45, 0, 0, 0, _DOS_DATE, crc, _FFFF, _FFFF, len(name), 20)
            + name + struct.pack("<HHQQ", 1, 16, size, size))


def _central(name: bytes, crc: int, size: int, offset: int) -> bytes:
    return (_CENTRAL.pack(0x02014B50, 45 | 3 << 8, 45, 0, 0, 0, _DOS_DATE, crc, _FFFF, _FFFF,
                          len(name), 28, 0, 0, 0, 0o644 << 16, _FFFF)
            + name + struct.pack("<HHQQQ", 1, 24, size, size, offset))


def _npz_parts(shape: tuple) -> tuple[bytes, int, bytes]:
    """x.npy header, x data bytes, y.npy member (header + zero labels)."""
    samples = shape[-1]
    y = _npy_header("<i8", (samples,)) + bytes(8 * samples)
    return _npy_header("|u1", shape), shape[0] * shape[1] * samples, y


@lru_cache(maxsize=65536)
def npz_size(record_bytes: int, samples: int) -> int:
    x_head, x_data, y = _npz_parts(npz_shape(record_bytes, samples))
    entries = 2 * (30 + 5 + 20) + 2 * (46 + 5 + 28)
    return entries + len(x_head) + x_data + len(y) + _ZIP64_END.size + _ZIP64_LOCATOR.size + _END.size


def write_npz(sink: Sink, record_bytes: int, samples: int) -> None:
    x_head, x_data, y = _npz_parts(npz_shape(record_bytes, samples))
    x_size = len(x_head) + x_data
    sink.put(_local_header(b"x.npy", 0, x_size) + x_head)     # CRC patched below
    crc = crc32(x_head)
    for piece in sink.random(x_data):
        crc = crc32(piece, crc)
    y_offset = 30 + 5 + 20 + x_size
    y_crc = crc32(y)
    sink.put(_local_header(b"y.npy", y_crc, len(y)) + y)
    cd_offset = y_offset + 30 + 5 + 20 + len(y)
    central = _central(b"x.npy", crc, x_size, 0) + _central(b"y.npy", y_crc, len(y), y_offset)
    end64 = cd_offset + len(central)
    sink.put(central
             + _ZIP64_END.pack(0x06064B50, 44, 45, 45, 0, 0, 2, 2, len(central), cd_offset)
             + _ZIP64_LOCATOR.pack(0x07064B50, 0, end64, 1)
             + _END.pack(0x06054B50, 0, 0, 2, 2, _FFFF, _FFFF, 0))
    sink.flush()
    sink.writer.patch(14, struct.pack("<I", crc))


# --------------------------------------------------------------------------- JPEG (v3.0 retinanet)

JPEG_VARIANTS = 4                   # base images per size class (the file index picks one)
JPEG_MIN_BYTES = 1024               # below this no noise JPEG leaves room for a comment segment
_COM_MAX = 65533                    # payload bytes of one COM segment (its length field counts 2 more)


def _encode_noise(side: int, seed: int) -> bytes:
    import io

    from PIL import Image

    pixels = np.random.default_rng([seed, side]).integers(0, 256, (side, side, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=75)
    return out.getvalue()


@lru_cache(maxsize=256)
def jpeg_base(size_class: int, variant: int) -> tuple[bytes, int]:
    """(the base JPEG, the length of its SOI + APP0, where the comments go) for records of at least
    2**(size_class/8) bytes: a square noise image whose encoding takes about three quarters of that
    size (the side from the bytes per pixel of the last try: two or three encodes), at most 0.9 of
    it, leaving room for the comments."""
    budget = int(0.9 * 2 ** (size_class / 8))
    side = max(8, min(8192, int(math.sqrt(budget / 0.6))))
    data = _encode_noise(side, variant)
    for _ in range(8):
        if len(data) <= budget and (len(data) >= 0.8 * budget or side >= 8192):
            break
        side = max(8, min(8192, int(side * math.sqrt(0.85 * budget / len(data)))))
        data = _encode_noise(side, variant)
    while len(data) > budget and side > 8:
        side = max(8, int(side * 0.9))
        data = _encode_noise(side, variant)
    if len(data) > budget:
        raise ValueError(f"jpeg: record length {2 ** (size_class / 8):.0f} bytes: expected at least "
                         f"{JPEG_MIN_BYTES} bytes (the smallest JPEG and a comment)")
    head = 2 + (2 + int.from_bytes(data[4:6], "big") if data[2:4] == b"\xff\xe0" else 0)
    return data, head


def warm_jpeg(lengths) -> None:
    """Encode the bases the records of `lengths` need, once, before writer processes fork."""
    for size_class in sorted({jpeg_size_class(n) for n in np.unique(np.asarray(lengths))}):
        for variant in range(JPEG_VARIANTS):
            jpeg_base(size_class, variant)


def jpeg_size_class(record_bytes: int) -> int:
    return int(math.log2(max(1, int(record_bytes))) * 8)


def write_jpeg(sink: Sink, record_bytes: int, index: int) -> None:
    """One JPEG of exactly record_bytes: the base's head, comment segments of random bytes, the rest."""
    base, head = jpeg_base(jpeg_size_class(record_bytes), index % JPEG_VARIANTS)
    pad = int(record_bytes) - len(base)             # >= a tenth of the record: every segment >= 4 bytes
    segments = -(-pad // (_COM_MAX + 4))
    sink.put(base[:head])
    for i in range(segments):
        payload = pad // segments + (1 if i < pad % segments else 0) - 4
        sink.put(b"\xff\xfe" + struct.pack(">H", payload + 2))
        for _ in sink.random(payload):
            pass
    sink.put(base[head:])
    sink.flush()


def check_jpeg(backend, name: str, deep: bool = False) -> str | None:
    """None when `name` starts with SOI and ends with EOI (deep: Pillow decodes it), else what is wrong."""
    with backend.open_read(name, sequential=False) as f:
        size = f.size()
        head, tail = f.read_at(3, 0), f.read_at(2, max(0, size - 2))
        if head != b"\xff\xd8\xff":
            return f"jpeg header: expected SOI ff d8 ff, got {head.hex(' ') or 'nothing'}"
        if tail != b"\xff\xd9":
            return f"jpeg end: expected EOI ff d9, got {tail.hex(' ')} (truncated?)"
        if deep:
            return jpeg_decode_problem(f.read_at(size, 0))
    return None


def jpeg_decode_problem(data: bytes) -> str | None:
    """None when Pillow decodes `data` fully, else why not."""
    import io

    from PIL import Image
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except (OSError, ValueError, SyntaxError) as exc:
        return f"not a decodable JPEG ({str(exc).splitlines()[0][:120]})"
    return None


# --------------------------------------------------------------------------- hdf5 (open division)


def hdf5_bytes(sink: Sink, record_bytes: int, samples: int) -> bytes:
    """The bytes of an h5py file (the Sink provides the content only; h5py lays it out in memory)."""
    import io

    import h5py

    d1, d2, _ = npz_shape(record_bytes, samples)
    out = io.BytesIO()
    with h5py.File(out, "w", libver="earliest") as f:
        records = f.create_dataset("records", (samples, d1, d2), dtype="u1", track_times=False)
        for j in range(samples):
            flat = np.empty(d1 * d2, dtype=np.uint8)
            pos = 0
            for piece in sink.random(d1 * d2, queue=False):
                flat[pos:pos + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
                pos += len(piece)
            records[j] = flat.reshape(d1, d2)
        f.create_dataset("labels", data=np.zeros(samples, dtype=np.int64), track_times=False)
    return out.getvalue()


def hdf5_shape(backend, name: str):
    """The shape of `records` in the hdf5 object `name`, read through `backend`'s file object."""
    import h5py

    with backend.open_read(name, sequential=False) as handle, h5py.File(handle.fileobj(), "r") as f:
        return f["records"].shape


def check_hdf5(backend, name: str, record_bytes: int, samples: int) -> str | None:
    try:
        shape = hdf5_shape(backend, name)
    except (OSError, KeyError, ValueError, RuntimeError, TypeError, AttributeError) as exc:
        return f"not a readable hdf5 file ({str(exc).splitlines()[0][:120]})"
    d1, d2, _ = npz_shape(record_bytes, samples)
    return None if shape == (samples, d1, d2) else f"records shape {shape}, expected {(samples, d1, d2)}"
