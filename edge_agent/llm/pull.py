"""`model pull`: one GGUF from the Hugging Face hub into the models dir, resumable and checked.

huggingface_hub resolves the file (hf_hub_url + get_hf_file_metadata: HF_ENDPOINT, the token
from HF_TOKEN or HF_HOME, redirects to the CDN) and gives the LFS digest (X-Linked-Etag is the
sha256 of an LFS file) and size (X-Linked-Size). The bytes are streamed here, not by
hf_hub_download: the installed huggingface_hub (2.x) downloads into a process-unique temporary
file that it deletes on failure, so an interrupted pull could never resume, and it never checks
a sha256. Here the partial file stays in the models dir as NAME.part (with NAME.part.json naming
the digest it belongs to), a dropped connection is resumed with a Range request, the sha256 is
computed over the bytes as they arrive, and only a file whose digest matches is renamed into
place and recorded in SHA256SUMS. A mismatch deletes everything the pull wrote.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from edge_agent.modelfile.files import SHA256SUMS

log = logging.getLogger(__name__)

DEFAULT_REVISION = "main"
CHUNK_BYTES = 1 << 20  # read and hash in 1 MiB pieces
MAX_RESUMES = 5  # Range re-requests after dropped connections within one pull
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0  # a stalled CDN read longer than this counts as a dropped connection
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


class PullError(RuntimeError):
    """The file could not be pulled; the message says why and what to do."""


class DigestMismatch(PullError):
    """The downloaded bytes do not have the expected sha256; nothing was kept."""


@dataclass(frozen=True)
class PullResult:
    """What one pull did."""

    path: Path
    """The verified file in the models dir."""
    sha256: str
    """Its digest, as recorded in SHA256SUMS."""
    size: int
    """Its size, bytes."""
    downloaded_bytes: int
    """Bytes received over the network by this pull (0 when it was already present)."""
    resumed: bool
    """The download continued from bytes already on disk (a dropped connection or an earlier run)."""
    resumes: int
    """Range requests made to continue."""
    already_present: bool = False
    """The file was there with the right digest; nothing was downloaded."""


@dataclass(frozen=True)
class HubFile:
    """Where a hub file is and what it must hash to."""

    url: str
    """The resolve URL (under HF_ENDPOINT)."""
    location: str
    """Where the bytes are served from after redirects (a CDN for LFS files)."""
    sha256: str | None
    """The LFS digest from X-Linked-Etag, when the etag is one."""
    size: int | None
    """X-Linked-Size (or Content-Length)."""


def parse_spec(spec: str) -> tuple[str, str]:
    """REPO:FILE -> (repo, file); PullError for anything else."""
    repo, sep, file = spec.partition(":")
    if not sep or not file or repo.count("/") != 1 or not all(repo.split("/")):
        raise PullError(f"{spec!r}: expected a catalog name or REPO:FILE, e.g. org/model-GGUF:model-Q4_K_M.gguf")
    return repo, file


def _endpoint() -> str | None:
    # Read at call time: huggingface_hub freezes HF_ENDPOINT when it is first imported.
    value = os.environ.get("HF_ENDPOINT")
    return value.rstrip("/") if value else None


def resolve(repo: str, file: str, *, revision: str = DEFAULT_REVISION, token: str | bool | None = None) -> HubFile:
    """Ask the hub (HEAD on the resolve URL) where the file is, its size and its LFS sha256."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (EntryNotFoundError, GatedRepoError, HfHubHTTPError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    endpoint = _endpoint()
    url = hf_hub_url(repo, file, revision=revision, endpoint=endpoint)
    try:
        meta = get_hf_file_metadata(url, token=token, endpoint=endpoint)
    except GatedRepoError as err:
        raise PullError(f"{repo} is gated: accept its licence on the hub, then log in "
                        f"(`hf auth login`) or set HF_TOKEN") from err
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as err:
        raise PullError(f"{repo}:{file} (revision {revision}) not found on {endpoint or 'the hub'}") from err
    except HfHubHTTPError as err:
        raise PullError(f"{url}: {err}") from err
    except Exception as err:  # connection refused, DNS, TLS: say where we tried
        raise PullError(f"cannot reach {url}: {err}") from err
    etag = (meta.etag or "").lower()
    return HubFile(url=url, location=meta.location or url, sha256=etag if SHA256_RE.match(etag) else None,
                   size=meta.size)


def record_checksum(models_dir: Path, name: str, digest: str) -> None:
    """Put `digest  name` into models_dir/SHA256SUMS (the line install.sh writes, doctor reads)."""
    sums = models_dir / SHA256SUMS
    lines = sums.read_text().splitlines() if sums.is_file() else []
    kept = [line for line in lines if line.split()[-1:] != [name] and line.split()[-1:] != ["*" + name]]
    tmp = sums.with_name(SHA256SUMS + ".new")
    tmp.write_text("".join(f"{line}\n" for line in kept + [f"{digest}  {name}"]))
    tmp.replace(sums)


def _hash_file(path: Path) -> tuple["hashlib._Hash", int]:
    digest = hashlib.sha256()
    n = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(CHUNK_BYTES), b""):
            digest.update(block)
            n += len(block)
    return digest, n


def _headers(hub: HubFile, token: str | bool | None) -> dict[str, str]:
    from huggingface_hub.utils import build_hf_headers

    headers = dict(build_hf_headers(token=token))
    headers["Accept-Encoding"] = "identity"  # byte ranges of the file itself, never of a gzip
    if urlparse(hub.location).netloc != urlparse(hub.url).netloc:
        headers.pop("authorization", None)  # a signed CDN URL needs no token; never leak it there
    return headers


class _Download:
    """The partial file and its digest-so-far, across reconnects."""

    def __init__(self, part: Path, hub: HubFile, progress: bool):
        self.part, self.hub = part, hub
        self.sidecar = part.with_name(part.name + ".json")
        self.digest = hashlib.sha256()
        self.have = 0
        self.received = 0
        self.resumed = False
        self.progress = progress
        self.bar: Any = None

    def open(self) -> None:
        stamp = {"sha256": self.hub.sha256, "size": self.hub.size}
        try:
            earlier = json.loads(self.sidecar.read_text()) if self.sidecar.is_file() else None
        except ValueError:
            earlier = None
        if self.part.is_file() and earlier == stamp:
            self.digest, self.have = _hash_file(self.part)  # bytes of an earlier run, hashed once
            if self.hub.size is not None and self.have > self.hub.size:
                self.restart()
            elif self.have:
                self.resumed = True
        else:
            self.part.write_bytes(b"")
        self.sidecar.write_text(json.dumps(stamp))
        if self.progress:
            from huggingface_hub.utils import tqdm

            self.bar = tqdm(total=self.hub.size, initial=self.have, unit="B", unit_scale=True, unit_divisor=1024,
                            desc=self.part.name.removesuffix(".part"))

    def restart(self) -> None:
        self.part.write_bytes(b"")
        self.digest, self.have = hashlib.sha256(), 0
        if self.bar is not None:
            self.bar.reset(total=self.hub.size)

    def fetch(self, session: Any, headers: dict[str, str]) -> None:
        """One GET from `have` to the end; raises the transport error if the connection drops."""
        import httpx2

        req = dict(headers)
        if self.have:
            req["Range"] = f"bytes={self.have}-"
        timeout = httpx2.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
        with session.stream("GET", self.hub.location, headers=req, timeout=timeout, follow_redirects=True) as resp:
            if resp.status_code == 416 and self.have:
                if self.have != self.hub.size:  # the part is not a prefix of this file: start over
                    self.restart()
                return  # complete, or the caller's loop fetches again from byte 0
            if resp.status_code >= 400:
                raise PullError(f"{self.hub.location}: HTTP {resp.status_code}")
            if self.have and resp.status_code == 200:  # the server ignored the Range: start over
                log.warning("%s ignored the byte range; downloading from the start", self.hub.location)
                self.restart()
            with self.part.open("ab") as fh:
                for chunk in resp.iter_bytes(CHUNK_BYTES):
                    fh.write(chunk)
                    self.digest.update(chunk)
                    self.have += len(chunk)
                    self.received += len(chunk)
                    if self.bar is not None:
                        self.bar.update(len(chunk))

    def discard(self) -> None:
        self.part.unlink(missing_ok=True)
        self.sidecar.unlink(missing_ok=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def pull(repo: str, file: str, models_dir: Path, *, revision: str = DEFAULT_REVISION, sha256: str | None = None,
         token: str | bool | None = None, progress: bool = True, max_resumes: int = MAX_RESUMES) -> PullResult:
    """Download `file` of `repo` into `models_dir`, verified; see the module docstring."""
    import httpx2
    from huggingface_hub.utils import get_session

    hub = resolve(repo, file, revision=revision, token=token)
    want = (sha256 or "").lower() or hub.sha256
    if sha256 and not SHA256_RE.match(want):
        raise PullError(f"--sha256 {sha256!r} is not a sha256 hex digest")
    if want is None:
        raise PullError(f"{hub.url}: the hub gave no sha256 (etag is not an LFS digest); pass --sha256 HEX")
    if sha256 and hub.sha256 and hub.sha256 != want:
        raise DigestMismatch(f"{repo}:{file}: the hub says sha256 {hub.sha256}, expected {want}; nothing downloaded")
    name = Path(file).name
    target = models_dir / name
    if target.is_file():
        digest, size = _hash_file(target)
        if digest.hexdigest() == want:
            record_checksum(models_dir, name, want)
            return PullResult(target, want, size, 0, False, 0, already_present=True)
        log.warning("%s exists with another sha256; replacing it", target)
    models_dir.mkdir(parents=True, exist_ok=True)
    dl = _Download(models_dir / (name + ".part"), hub, progress)
    resumes = 0
    try:
        dl.open()
        session, headers = get_session(), _headers(hub, token)
        while True:
            try:
                dl.fetch(session, headers)
            except (httpx2.TransportError, httpx2.StreamError) as err:
                if resumes >= max_resumes:
                    raise PullError(f"download of {name} interrupted at {dl.have} bytes ({err}); "
                                    f"run the same pull again to resume") from err
                resumes += 1
                log.warning("connection dropped at %d bytes (%s); resuming", dl.have, err)
                continue
            if hub.size is not None and dl.have < hub.size:  # a short body without an error
                if resumes >= max_resumes:
                    raise PullError(f"download of {name} stopped at {dl.have} of {hub.size} bytes; run it again")
                resumes += 1
                continue
            break
    finally:
        dl.close()
    got = dl.digest.hexdigest()
    if (hub.size is not None and dl.have != hub.size) or got != want:
        dl.discard()
        raise DigestMismatch(f"{name}: downloaded {dl.have} bytes with sha256 {got}, expected {want}"
                             f"{f' ({hub.size} bytes)' if hub.size is not None else ''}; the file was deleted")
    dl.part.replace(target)
    dl.sidecar.unlink(missing_ok=True)
    record_checksum(models_dir, name, want)
    return PullResult(target, want, dl.have, dl.received, dl.resumed or resumes > 0, resumes)
