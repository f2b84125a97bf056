"""A tiny real HTTP proxy for the throttling test: it forwards every request to the real S3 server,
except every `every`-th one, which it answers itself with 503 SlowDown (what S3 says when throttling).
A real component between client and server, started by the test on 127.0.0.1; not a mock of the server:
every request that is not throttled is served by versitygw itself. Bounded: it stops with the test."""

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

SLOWDOWN = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
            b'<Message>Please reduce your request rate.</Message></Error>')


class Throttle:
    def __init__(self, upstream: str, every: int = 4, cut_gets: int = 0):
        self.upstream, self.every, self.seen, self.throttled = urlsplit(upstream), every, 0, 0
        self.cut_gets, self.cut = cut_gets, 0        # the first cut_gets GETs: half the body, then a close
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    outer.seen += 1
                    throttle = outer.seen % outer.every == 0
                    outer.throttled += throttle
                if throttle:
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(SLOWDOWN)))
                    self.end_headers()
                    self.wfile.write(SLOWDOWN)
                    return
                conn = http.client.HTTPConnection(outer.upstream.hostname, outer.upstream.port, timeout=30)
                conn.request(self.command, self.path, body=body, headers=dict(self.headers))
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                head = self.command == "HEAD"      # a HEAD keeps the object's Content-Length
                for key, value in resp.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection") and (head or key.lower() != "content-length"):
                        self.send_header(key, value)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with outer.lock:
                    cut = self.command == "GET" and len(data) > 1 and outer.cut < outer.cut_gets
                    outer.cut += cut
                self.wfile.write(data[:len(data) // 2] if cut else data)
                self.close_connection = self.close_connection or cut      # the body cut mid-stream
                conn.close()

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
