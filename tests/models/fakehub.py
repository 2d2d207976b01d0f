"""A loopback HTTP server that answers like the hub's resolve endpoint, for `model pull` tests.

HEAD/GET /{org}/{repo}/resolve/{revision}/{file} on 127.0.0.1 answer 302 to a "CDN" on another
host (127.0.0.2, so huggingface_hub stops there as it does on the real hub and drops the token)
with the headers an LFS file gets: X-Repo-Commit, X-Linked-Etag (the sha256, quoted),
X-Linked-Size and ETag. /cdn/{sha256} serves the bytes with Range support (206 + Content-Range). Faults on demand:
`drop_after` sends a full Content-Length but closes the connection after that many bytes (for
the first `drop_times` GETs); `bad_digest` advertises a digest the bytes do not have.
"""
from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HUB_HOST, CDN_HOST = "127.0.0.1", "127.0.0.2"  # two loopback hosts: the hub and its CDN
COMMIT = "0123456789abcdef0123456789abcdef01234567"
RANGE_RE = re.compile(r"^bytes=(\d+)-$")


@dataclass
class HubState:
    """What the fake hub serves and what it has seen."""

    files: dict[str, bytes] = field(default_factory=dict)
    """'org/repo/file' -> content."""
    drop_after: int | None = None
    """Close the connection after this many body bytes of a GET (None: never)."""
    drop_times: int = 1
    """How many GETs are cut short."""
    bad_digest: bool = False
    """Advertise a wrong X-Linked-Etag."""
    gated: dict[str, str] = field(default_factory=dict)
    """'org/repo' -> the token it demands (answers 401 GatedRepo without it)."""
    requests: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    """(method, path, Range header, Authorization header) of every request."""
    cdn: str = ""
    """Base URL of the CDN server (set by FakeHub)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def digest(self, content: bytes) -> str:
        real = hashlib.sha256(content).hexdigest()
        return hashlib.sha256(b"not" + content).hexdigest() if self.bad_digest else real


def _handler(state: HubState):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet test output
            pass

        def _record(self) -> None:
            with state.lock:
                state.requests.append((self.command, self.path, self.headers.get("Range"),
                                       self.headers.get("Authorization")))

        def _resolve(self, body: bool) -> None:
            parts = self.path.split("/")
            # /org/repo/resolve/rev/file
            if len(parts) < 6 or parts[3] != "resolve":
                return self._status(404, "Entry not found")
            repo = f"{parts[1]}/{parts[2]}"
            token = state.gated.get(repo)
            if token is not None and self.headers.get("Authorization") != f"Bearer {token}":
                self.send_response(401)
                self.send_header("X-Error-Code", "GatedRepo")
                self.send_header("X-Error-Message", "Access to this model is restricted; log in")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            key = f"{repo}/{'/'.join(parts[5:])}"
            content = state.files.get(key)
            if content is None:
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            sha = hashlib.sha256(content).hexdigest()
            self.send_response(302)
            self.send_header("Location", f"{state.cdn}/cdn/{sha}")
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("X-Linked-Etag", f'"{state.digest(content)}"')
            self.send_header("X-Linked-Size", str(len(content)))
            self.send_header("ETag", f'"{state.digest(content)}"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _status(self, code: int, text: str) -> None:
            data = text.encode()
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _cdn(self, body: bool) -> None:
            sha = self.path.rsplit("/", 1)[-1]
            content = next((c for c in state.files.values() if hashlib.sha256(c).hexdigest() == sha), None)
            if content is None:
                return self._status(404, "no such blob")
            start = 0
            rng = self.headers.get("Range")
            if rng:
                m = RANGE_RE.match(rng)
                if not m:
                    return self._status(416, "bad range")
                start = int(m.group(1))
                if start >= len(content):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(content)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            part = content[start:]
            self.send_response(206 if rng else 200)
            if rng:
                self.send_header("Content-Range", f"bytes {start}-{len(content) - 1}/{len(content)}")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            if not body:
                return
            with state.lock:
                cut = state.drop_after is not None and state.drop_times > 0
                if cut:
                    state.drop_times -= 1
            if cut:
                self.wfile.write(part[:state.drop_after])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)  # mid-body: the client sees an incomplete response
                return
            self.wfile.write(part)

        def _route(self, body: bool) -> None:
            self._record()
            if self.path.startswith("/cdn/"):
                self._cdn(body)
            else:
                self._resolve(body)

        def do_HEAD(self):
            self._route(False)

        def do_GET(self):
            self._route(True)

    return Handler


class FakeHub:
    """`with FakeHub() as hub:` serves on 127.0.0.1:<free port>; hub.endpoint is the HF_ENDPOINT."""

    def __init__(self, state: HubState | None = None):
        self.state = state or HubState()
        self._servers = [ThreadingHTTPServer((host, 0), _handler(self.state)) for host in (HUB_HOST, CDN_HOST)]
        for server in self._servers:
            server.daemon_threads = True
        self._threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in self._servers]
        self.state.cdn = self._url(self._servers[1])

    @staticmethod
    def _url(server: ThreadingHTTPServer) -> str:
        host, port = server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def endpoint(self) -> str:
        return self._url(self._servers[0])

    def add(self, repo: str, file: str, content: bytes) -> None:
        self.state.files[f"{repo}/{file}"] = content

    def ranges(self) -> list[str | None]:
        """The Range header of every GET of a blob."""
        return [r for (m, p, r, _) in self.state.requests if m == "GET" and p.startswith("/cdn/")]

    def __enter__(self) -> "FakeHub":
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        for server, thread in zip(self._servers, self._threads):
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

