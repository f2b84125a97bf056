"""Writes to object storage (the S3 backend's Writer): buffered to the part size, one PUT below it, a
multipart upload above it; part 1 held back until commit, so the patch window (an npz's CRC) stays
writable; commit completes, abort aborts: a name never shows half an object.

Copies and allocations, the client's cost per byte besides the socket's: the bytes go once into a
part buffer that this process reuses from writer to writer (`_FREE`: the memory is touched once, not
page-faulted in again for every file, as a new bytearray grown by += was), and a request's body is
that buffer itself (`_Body`, a read-only file over a memoryview, handed to the socket in one sendall),
never a bytes() copy of it.
"""

from __future__ import annotations

from suite.storage.backend import s3io
from suite.storage.backend.base import PATCH_WINDOW_BYTES, Writer

_FREE: list = []        # this process's idle part buffers (a fork inherits its own copy)
_FREE_MAX = 8


def _take(size: int) -> bytearray:
    """A part buffer of `size` bytes: an idle one of that size, else a new one."""
    try:
        buf = _FREE.pop()
    except IndexError:
        return bytearray(size)
    return buf if len(buf) == size else bytearray(size)


def _give(buf) -> None:
    if buf is not None and len(_FREE) < _FREE_MAX:
        _FREE.append(buf)


class _Body:
    """A request body over a memoryview, without a copy: a file to botocore (it checks for read()) with
    a length (the Content-Length); read(n) hands back everything left at once, so urllib3 sends it in one
    sendall instead of one per 16 KiB block. seek(0) rewinds it for a retry."""

    __slots__ = ("view", "pos")

    def __init__(self, view: memoryview):
        self.view, self.pos = view, 0

    def __len__(self) -> int:
        return len(self.view)

    def read(self, _n: int = -1) -> memoryview:
        out, self.pos = self.view[self.pos:], len(self.view)
        return out

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else len(self.view) + offset
        return self.pos

    def tell(self) -> int:
        return self.pos


class S3Writer(Writer):
    """Buffered to the part size; then a multipart upload, part 1 held back for patch()."""

    def __init__(self, bucket: str, key: str, name: str, what: str, part_bytes: int | None = None):
        self.bucket, self.key, self.name, self.what = bucket, key, name, what
        self.part_bytes = part_bytes or s3io.PART_BYTES
        self.buf, self.pos = _take(self.part_bytes), 0        # the part being filled, bytes in it
        self.first, self.parts, self.upload_id, self.done = None, [], None, False
        self.writev = self._writev

    def _writev(self, buffers: list) -> int:
        n = 0
        for b in buffers:
            view = memoryview(b).cast("B")
            n += len(view)
            while len(view):
                k = min(self.part_bytes - self.pos, len(view))
                self.buf[self.pos:self.pos + k] = view[:k]
                self.pos += k
                view = view[k:]
                if self.pos == self.part_bytes:
                    self._part()
        return n

    def _call(self, kind: str, method: str, **kwargs):
        return s3io.call(kind, self.what, method, Bucket=self.bucket, Key=self.key, **kwargs)

    def _part(self) -> None:
        """The buffer's bytes are a part: part 1 is kept (uploaded at commit, after any patch), a later
        one is uploaded now and its buffer refilled."""
        if self.first is None:
            self.first, self.buf, self.pos = self.buf, _take(self.part_bytes), 0
            return
        if self.upload_id is None:
            self.upload_id = self._call("MPU", "create_multipart_upload")["UploadId"]
        number = len(self.parts) + 2
        etag = self._call("PUT", "upload_part", PartNumber=number, UploadId=self.upload_id,
                          Body=_Body(memoryview(self.buf)[:self.pos]))["ETag"]
        self.parts.append({"PartNumber": number, "ETag": etag})
        self.pos = 0

    def patch(self, offset: int, data: bytes) -> None:
        if offset + len(data) > PATCH_WINDOW_BYTES:
            raise ValueError(f"patch at byte {offset}: expected within the first {PATCH_WINDOW_BYTES} bytes")
        target = self.first if self.first is not None else self.buf
        target[offset:offset + len(data)] = data

    def commit(self) -> None:
        if self.first is None or (self.upload_id is None and not self.parts and not self.pos):
            body = memoryview(self.buf)[:self.pos] if self.first is None else memoryview(self.first)
            self._call("PUT", "put_object", Body=_Body(body))
            self.done = True
            self._release()
            return
        if self.upload_id is None:
            self.upload_id = self._call("MPU", "create_multipart_upload")["UploadId"]
        if self.pos:
            self._part()
        etag = self._call("PUT", "upload_part", PartNumber=1, UploadId=self.upload_id,
                          Body=_Body(memoryview(self.first)))["ETag"]
        self._call("MPU", "complete_multipart_upload", UploadId=self.upload_id,
                   MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}, *self.parts]})
        self.done = True
        self._release()

    def abort(self) -> None:
        if self.upload_id is not None and not self.done:
            try:
                s3io.call("MPU", self.what, "abort_multipart_upload", attempts=2, Bucket=self.bucket,
                          Key=self.key, UploadId=self.upload_id)
            except OSError:
                pass         # the server is gone: the upload was never completed, so no object shows
        self._release()

    def _release(self) -> None:
        """The part buffers back to the process's idle list (once)."""
        _give(self.buf)
        _give(self.first)
        self.buf, self.first, self.pos = bytearray(), None, 0
