"""The S3 client side of the S3 backend (suite.storage.backend.s3): requests, reads, multipart writes.

Client: boto3/botocore (docs/object-storage.md says why, by measurement). The endpoint, region and
credentials come from the standard AWS chain only (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, the keys,
AWS_REGION, AWS_PROFILE and its config files); nothing here reads them from a command line, and the
evidence names the endpoint's host and port only, never a key.

Requests, as a trainer makes them: a sequential read is ONE whole-object GET streamed into the
caller's buffer (a ranged GET from the offset when the reader jumps); a random read (headers, h5py,
zip) is a ranged GET of exactly the bytes asked. A listing is ListObjectsV2 pages. Writes (PUT, or a
multipart upload above the part size): suite.storage.backend.s3write.
Every request goes through `call`: counted by kind (suite.storage.backend.s3stats), timed, retried
with exponential backoff on 500/503 (SlowDown), resets and refused connections, each retry counted.
"""

from __future__ import annotations

import errno
import io
import os
import random
import threading
import time
from urllib.parse import urlsplit

from suite.errors import SuiteError
from suite.storage.backend.base import ReadHandle
from suite.storage.backend.s3stats import REQUESTS

SCHEME = "s3://"
PART_BYTES = 16 * 1024 * 1024          # multipart above this; the part size (S3's minimum is 5 MiB)
# No SHA-256 of every body written (botocore signs payloads over plain http unless told not to): the
# request is signed, the body sent as UNSIGNED-PAYLOAD, as AWS SDKs do over https. That pass is 0.6 ms of
# client CPU per MB here; a body's integrity rests on TCP (TLS on https) and the files' own CRCs.
PAYLOAD_SIGNING = False
MAX_ATTEMPTS = 5                        # one try and 4 retries: 0.05, 0.1, 0.2, 0.4 s (+ jitter)
BACKOFF_S = 0.05
RETRY_STATUS = {500, 502, 503, 504}
RETRY_CODES = {"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "Throttling",
               "ThrottlingException", "RequestTimeTooSkewed"}
NOT_FOUND = {"NoSuchKey", "404", "NotFound"}
DENIED = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403", "InvalidToken", "ExpiredToken"}

_CLIENTS: dict = {}                     # pid -> client: a forked worker makes its own connections
_CLIENT_LOCK = threading.Lock()


def is_url(root) -> bool:
    return "://" in str(root)


def split_url(url: str) -> tuple[str, str]:
    """s3://bucket/prefix -> (bucket, prefix without slashes at the ends); SuiteError otherwise."""
    text = str(url)
    if not text.startswith(SCHEME):
        raise SuiteError(f"data location: expected s3://bucket/prefix or a local path, got {text!r}")
    parts = urlsplit(text)
    if not parts.netloc or parts.query or parts.fragment or "@" in parts.netloc:
        raise SuiteError(f"data location: expected s3://bucket/prefix (no credentials, query or fragment), "
                         f"got {text!r}")
    return parts.netloc, parts.path.strip("/")


def library() -> dict:
    import boto3
    import botocore

    return {"name": "boto3", "version": boto3.__version__, "botocore_version": botocore.__version__,
            "payload_signing": PAYLOAD_SIGNING}


def client():
    """This process's S3 client, from the AWS chain (made after a fork, never shared with the parent)."""
    pid = os.getpid()
    found = _CLIENTS.get(pid)
    if found is not None:
        return found
    with _CLIENT_LOCK:
        if pid not in _CLIENTS:
            if _CLIENTS:                 # a forked worker: the parent's session, with its models loaded
                _CLIENTS.clear()
            else:
                _SESSION.clear()         # a new configuration (tests point at another server)
            _CLIENTS[pid] = _make_client()
        return _CLIENTS[pid]


_SESSION: list = []     # one boto3 session, made before any fork: a worker's client reuses its loaded models


def _make_client():
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise SuiteError("storage.storage_type object: expected the s3 extra (in the suite checkout: "
                         "pip install '.[s3]', README's set-up), got no boto3") from None
    try:
        if not _SESSION:
            _SESSION.append(boto3.session.Session())
        session = _SESSION[0]
        region = session.region_name or "us-east-1"
    except Exception as exc:       # botocore's ProfileNotFound (AWS_PROFILE names no profile), a broken config file
        raise SuiteError(f"S3 client: expected a usable AWS configuration (AWS_ENDPOINT_URL, AWS_PROFILE, "
                         f"AWS_REGION), got {type(exc).__name__}: {redact(exc)}") from None
    config = Config(region_name=region, retries={"total_max_attempts": 1, "mode": "standard"},  # retries: call()
                    max_pool_connections=64, connect_timeout=5, read_timeout=60, tcp_keepalive=True,
                    s3={"addressing_style": "path", "payload_signing_enabled": PAYLOAD_SIGNING},
                    request_checksum_calculation="when_required", response_checksum_validation="when_required")
    try:
        return session.client("s3", config=config)
    except Exception as exc:       # botocore's ProfileNotFound, a malformed endpoint URL, ...
        raise SuiteError(f"S3 client: expected a usable AWS configuration (AWS_ENDPOINT_URL, AWS_PROFILE, "
                         f"AWS_REGION), got {type(exc).__name__}: {redact(exc)}") from None


def redact(exc) -> str:
    """An error's first line with no secret in it: the secret key and session token (as the environment
    holds them) and any user:password@ of a URL replaced by ***."""
    import os
    import re

    text = str(exc).splitlines()[0] if str(exc) else ("" if isinstance(exc, str) else type(exc).__name__)
    for var in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        value = os.environ.get(var)
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    return re.sub(r"//[^/@\s]+@", "//***@", text)


def endpoint_host() -> str:
    """host:port of the endpoint in use (no scheme, path or key)."""
    url = urlsplit(client().meta.endpoint_url)
    return url.netloc.rsplit("@", 1)[-1]


def _status(exc) -> tuple[int | None, str]:
    response = getattr(exc, "response", None) or {}
    return (response.get("ResponseMetadata", {}).get("HTTPStatusCode"),
            str(response.get("Error", {}).get("Code", "")))


def _transient(exc) -> bool:
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError

    if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
        return False
    if isinstance(exc, ClientError):
        status, code = _status(exc)
        return status in RETRY_STATUS or code in RETRY_CODES
    return isinstance(exc, (BotoCoreError, ConnectionError, TimeoutError)) or _is_protocol_error(exc)


def _is_protocol_error(exc) -> bool:
    import urllib3.exceptions

    return isinstance(exc, (urllib3.exceptions.ProtocolError, urllib3.exceptions.ReadTimeoutError))


def oserror(exc, what: str, attempts: int = MAX_ATTEMPTS) -> OSError:
    """The OSError (with errno) a caller reports as one line: `what` names the endpoint and object."""
    from botocore.exceptions import ClientError, NoCredentialsError, PartialCredentialsError

    if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
        return PermissionError(errno.EACCES, f"{what}: no AWS credentials (expected AWS_ACCESS_KEY_ID and "
                                             f"AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)")
    if isinstance(exc, ClientError):
        status, code = _status(exc)
        if code == "NoSuchBucket":
            return FileNotFoundError(errno.ENOENT, f"{what}: no such bucket ({code})")
        if code in NOT_FOUND or status == 404:
            return FileNotFoundError(errno.ENOENT, f"{what}: no such object")
        if code in DENIED or status == 403:
            return PermissionError(errno.EACCES, f"{what}: access denied ({code}: check the AWS credentials)")
        err = OSError(errno.EIO, f"{what}: {code or status} {redact(exc.response.get('Error', {}).get('Message', ''))}".strip())
        err.s3_status, err.s3_code = status, code       # what the server said, not words of the message
        return err
    return OSError(errno.ECONNREFUSED if "connect" in str(exc).lower() else errno.EIO,
                   f"{what}: endpoint unreachable after {attempts} tries ({type(exc).__name__})")


def call(kind: str, what: str, method: str, attempts: int = MAX_ATTEMPTS, **kwargs):
    """One request with its retries: counted, timed, backed off; OSError when it cannot be done."""
    fn = getattr(client(), method)
    body = kwargs.get("Body")
    for attempt in range(attempts):
        if hasattr(body, "seek"):
            body.seek(0)             # a retry sends the body again from its start
        t0 = time.perf_counter()
        try:
            response = fn(**kwargs)
        except Exception as exc:     # botocore raises several unrelated hierarchies: sorted below
            REQUESTS.record(kind, time.perf_counter() - t0, failed=True)
            if not _transient(exc) or attempt + 1 == attempts:
                raise oserror(exc, what, attempt + 1) from None
            REQUESTS.retry(kind)
            time.sleep(BACKOFF_S * 2 ** attempt * (1 + random.random() / 2))
            continue
        REQUESTS.record(kind, time.perf_counter() - t0, nbytes_written=len(kwargs.get("Body", b"")))
        return response
    raise AssertionError("unreachable")


class S3ReadHandle(ReadHandle):
    """Sequential: one streamed GET from the offset; random: a ranged GET per read."""

    __slots__ = ("name", "bucket", "key", "what", "sequential", "_size", "_body", "_pos", "_file")

    def __init__(self, name: str, bucket: str, key: str, what: str, sequential: bool):
        self.name, self.bucket, self.key, self.what, self.sequential = name, bucket, key, what, sequential
        self._size, self._body, self._pos, self._file = None, None, -1, None

    def size(self) -> int:
        if self._size is None:
            head = call("HEAD", self.what, "head_object", Bucket=self.bucket, Key=self.key)
            self._size = int(head["ContentLength"])
        return self._size

    def _get(self, offset: int, end: int | None):
        """GET bytes offset..end-1 (None: to the end); None when the offset is at or past the end."""
        if self._size is not None and offset >= self._size:
            return None
        rng = f"bytes={offset}-" + ("" if end is None else str(end - 1))
        try:
            response = call("GET", self.what, "get_object", Bucket=self.bucket, Key=self.key,
                            **({"Range": rng} if offset or end is not None else {}))
        except OSError as exc:        # the status, never the message: that names the endpoint, whose port may hold "416"
            if getattr(exc, "s3_code", None) == "InvalidRange" or getattr(exc, "s3_status", None) == 416:
                return None
            raise
        total = response.get("ContentRange", "").rpartition("/")[2]
        self._size = int(total) if total.isdigit() else (int(response["ContentLength"]) if not offset else None)
        return _Stream(response["Body"]._raw_stream)

    def readinto_at(self, _key, buffers: list, offset: int) -> int:
        want = sum(len(b) for b in buffers)
        if not want:
            return 0
        for attempt in range(MAX_ATTEMPTS):
            try:
                return self._readinto(buffers, offset, want)
            except Exception as exc:       # a reset mid-body: a ranged GET from where it stopped
                self._drop()
                if not _transient(exc) or attempt + 1 == MAX_ATTEMPTS:
                    raise exc if isinstance(exc, OSError) and not _is_protocol_error(exc) else oserror(exc, self.what)
                REQUESTS.retry("GET")
                time.sleep(BACKOFF_S * 2 ** attempt)
        raise AssertionError("unreachable")

    def _readinto(self, buffers: list, offset: int, want: int) -> int:
        if not self.sequential:
            body = self._get(offset, offset + want)
            if body is None:
                return 0
            try:
                return _fill(body, buffers)
            finally:
                body.release_conn()
        if self._body is None or self._pos != offset:
            self._drop()
            self._body = self._get(offset, None)
            if self._body is None:
                return 0
            self._pos = offset
        got = _fill(self._body, buffers)
        self._pos += got
        if got < want or (self._size is not None and self._pos >= self._size):
            self._drop()
        return got

    def _drop(self) -> None:
        if self._body is not None:
            body, self._body, self._pos = self._body, None, -1
            body.release_conn() if body.isclosed() or self._size == self._pos else body.close()

    def fileobj(self):
        if self._file is None:
            self._file = io.BufferedReader(_RawObject(self), buffer_size=1 << 20)
        return self._file

    def close(self) -> None:
        self._drop()


class _Stream:
    """A GET's body read straight from the socket into the caller's buffer.

    urllib3's HTTPResponse.readinto is read(n) plus a copy (and http.client's read(n) one more):
    two copies and a fresh n-byte allocation per chunk. http.client's readinto (under urllib3's
    response, `_fp`) fills the buffer from the socket directly (BufferedReader hands a large buffer
    to recv_into) and keeps the Content-Length and chunked framing. A body that ends before its
    Content-Length is a ConnectionResetError (transient: the caller resumes with a ranged GET), as
    urllib3's enforce_content_length would have it."""

    __slots__ = ("raw", "fp", "left")

    def __init__(self, raw):
        self.raw, self.fp = raw, getattr(raw, "_fp", None)
        self.left = None if self.fp is None else getattr(self.fp, "length", None)

    def readinto(self, view) -> int:
        if self.fp is None or self.left is None:      # no http.client response under it: urllib3's way
            return self.raw.readinto(view)
        if not self.left:
            return 0
        n = self.fp.readinto(view)
        if not n and len(view):
            raise ConnectionResetError(f"the body ended {self.left} bytes before its Content-Length")
        self.left -= n
        return n

    def isclosed(self) -> bool:
        return self.raw.isclosed()

    def release_conn(self) -> None:
        self.raw.release_conn()

    def close(self) -> None:
        self.raw.close()


def _fill(body, buffers: list) -> int:
    """Read the stream into the buffers until they are full or the body ends."""
    total = 0
    for buf in buffers:
        view = memoryview(buf).cast("B")
        while len(view):
            n = body.readinto(view)
            if not n:
                REQUESTS.add_read(total)
                return total
            total += n
            view = view[n:]
    REQUESTS.add_read(total)
    return total


class _RawObject(io.RawIOBase):
    """A seekable read-only file over one object (ranged GETs), for zipfile and h5py."""

    def __init__(self, handle: S3ReadHandle):
        self.handle, self.pos = handle, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.handle.size() + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, buf) -> int:
        got = self.handle.readinto_at(None, [buf], self.pos)
        self.pos += got
        return got
