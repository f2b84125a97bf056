"""The S3 backend (storage.storage_type: object, or a data location s3://bucket/prefix).

A name is a '/'-separated key under the root's prefix; with root "" a name is a full s3:// URL (what
a run plan hands the ranks, as POSIX hands absolute paths). The requests themselves, their counts,
retries and latencies: suite.storage.backend.s3io. `preflight()` (one HEAD of the bucket) turns wrong
credentials, a missing bucket and an unreachable endpoint into one line before anything runs.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone

from suite.errors import SuiteError
from suite.storage.backend import s3io, s3write
from suite.storage.backend.base import Backend, Entry
from suite.storage.backend.s3stats import summary

CACHE_NOTE = ("object storage: the client keeps no cache of object data (every read is a GET to the "
              "endpoint), so there is nothing to clear on the client; ")


class S3Backend(Backend):
    def __init__(self, root, storage_type: str = "object"):
        self.root, self.storage_type = str(root), storage_type
        self.bucket, self.prefix = s3io.split_url(self.root) if self.root else ("", "")
        self._checked = False
        s3io.client()        # made now, not at the first request: a rank's first GET or a worker's first PUT

    # ---------------------------------------------------------------- names

    def _where(self, name: str) -> tuple[str, str]:
        """(bucket, key) of a name (a full URL when the root is "")."""
        if not self.root or s3io.is_url(name):
            return s3io.split_url(name)
        return self.bucket, f"{self.prefix}/{name}".strip("/") if self.prefix else name.strip("/")

    def _what(self, bucket: str, key: str = "") -> str:
        """What an error line names: the endpoint and the object (never a key of the credentials)."""
        return f"s3://{bucket}/{key} at {s3io.endpoint_host()}"

    def locate(self, name: str) -> str:
        bucket, key = self._where(name)
        return f"s3://{bucket}/{key}"

    # ---------------------------------------------------------------- checks

    def preflight(self) -> None:
        """One HEAD of the bucket: SuiteError (exit 2, one line) for wrong credentials, a missing
        bucket or an unreachable endpoint. Once per backend."""
        if self._checked:
            return
        try:
            s3io.call("HEAD", self._what(self.bucket), "head_bucket", attempts=2, Bucket=self.bucket)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if isinstance(exc, FileNotFoundError):
                reason = f"s3://{self.bucket} at {s3io.endpoint_host()}: no such bucket"
            raise SuiteError(f"{self.root}: expected a reachable S3 bucket, got: {reason}") from None
        self._checked = True

    # ---------------------------------------------------------------- listing

    def list(self, prefix: str = "", recursive: bool = True) -> list[Entry]:
        bucket, key = self._where(prefix)
        base = key.rstrip("/") + "/" if key else ""
        strip = len(self.prefix) + 1 if self.prefix and self.root else 0
        out: list[Entry] = []
        kwargs = {"Bucket": bucket, "Prefix": base, **({} if recursive else {"Delimiter": "/"})}
        while True:
            page = s3io.call("LIST", self._what(bucket, base), "list_objects_v2", **kwargs)
            out.extend(Entry(o["Key"][strip:], int(o["Size"])) for o in page.get("Contents", ()))
            out.extend(Entry(p["Prefix"][strip:].rstrip("/"), -1, True) for p in page.get("CommonPrefixes", ()))
            if not page.get("IsTruncated"):
                break
            kwargs["ContinuationToken"] = page["NextContinuationToken"]
        if not out:
            raise FileNotFoundError(2, f"{self._what(bucket, base)}: nothing under this prefix")
        out.sort(key=lambda e: e.name)
        return out

    def size(self, name: str) -> int:
        bucket, key = self._where(name)
        return int(s3io.call("HEAD", self._what(bucket, key), "head_object", Bucket=bucket, Key=key)["ContentLength"])

    # ---------------------------------------------------------------- reads and writes

    def open_read(self, name: str, direct: bool = False, sequential: bool = True) -> s3io.S3ReadHandle:
        bucket, key = self._where(name)
        return s3io.S3ReadHandle(name, bucket, key, self._what(bucket, key), sequential)

    def create(self, name: str, size_hint: int = 0, fsync: bool = False, atomic: bool = True,
               temp_tag: str = "") -> s3write.S3Writer:
        """Always atomic: an object appears only when its upload completes (no temp name needed)."""
        bucket, key = self._where(name)
        return s3write.S3Writer(bucket, key, name, self._what(bucket, key))

    def remove(self, name: str) -> None:
        bucket, key = self._where(name)
        s3io.call("DELETE", self._what(bucket, key), "delete_object", Bucket=bucket, Key=key)

    def make_prefix(self, prefix: str) -> None:
        """Prefixes exist by the objects under them: nothing to make."""

    def sync(self, names: list[str]) -> None:
        """A completed PUT or multipart upload is durable as far as the client can tell: nothing to do."""

    def free_bytes(self) -> int | None:
        return None

    # ---------------------------------------------------------------- evidence

    def evidence(self) -> dict:
        """Endpoint host (no keys), bucket, prefix, client library and version, and the requests so far."""
        return {"storage_type": self.storage_type, "backend": "s3", "path": self.root,
                "endpoint_host": s3io.endpoint_host(), "bucket": self.bucket, "prefix": self.prefix,
                "library": s3io.library(), "part_size_bytes": s3io.PART_BYTES,
                "max_attempts": s3io.MAX_ATTEMPTS, "requests": summary(s3io.REQUESTS.snapshot())}

    def clear_cache(self):
        """Nothing on the client; a server on this host (127.0.0.1/localhost) keeps its objects in this
        host's page cache, so that is dropped (when permitted); a remote server's cache is not ours."""
        from suite.enforce.cache import CacheDrop, drop_caches

        host = s3io.endpoint_host().rsplit(":", 1)[0].strip("[]")
        if host in ("127.0.0.1", "localhost", "::1") or host.startswith("127."):
            drop = drop_caches()
            return dataclasses.replace(drop, method=CACHE_NOTE + "the server runs on this host: its page cache "
                                       "dropped too (" + drop.method + ")")
        return CacheDrop(attempted=False, succeeded=True, duration_s=0.0, error=None,
                         method=CACHE_NOTE + f"the server at {host} is remote: its cache was not cleared",
                         at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
