"""`model pull` against a loopback fake of the hub's resolve endpoint, serving the bundled GGUF as
test/tiny:model.gguf: progress bar, resume after a dropped connection (in one pull and across
runs), sha256 checked against X-Linked-Etag, refusal that leaves nothing behind, tokens sent."""
from __future__ import annotations

import hashlib
import json

import pytest
from modelkit import TEST_FILE, TEST_REPO, run_cli

from edge_agent.llm.pull import DigestMismatch, PullError, pull, record_checksum
from edge_agent.modelfile.files import SHA256SUMS
from edge_agent.ops.doctor import check_model


def _files(d):
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_cli_pull_downloads_with_progress_bar_and_records_the_sum(hub, tmp_path, tiny_bytes):
    data = tmp_path / "data"
    proc = run_cli("--data-dir", str(data), "model", "pull", f"{TEST_REPO}:{TEST_FILE}")
    assert proc.returncode == 0, proc.stderr
    target = data / "models" / TEST_FILE
    assert proc.stdout.strip().splitlines()[-1] == str(target)
    assert "100%" in proc.stderr and TEST_FILE in proc.stderr  # tqdm's bar, on stderr
    digest = hashlib.sha256(tiny_bytes).hexdigest()
    assert target.read_bytes() == tiny_bytes
    assert (data / "models" / SHA256SUMS).read_text() == f"{digest}  {TEST_FILE}\n"
    assert _files(data / "models") == [SHA256SUMS, TEST_FILE]  # no .part left
    assert check_model(target).status == "pass"  # doctor checks it against SHA256SUMS
    assert hub.ranges() == [None]  # one plain GET


def test_a_dropped_connection_is_resumed_with_a_range_request(hub, tmp_path, tiny_bytes):
    cut = len(tiny_bytes) // 3
    hub.state.drop_after = cut
    result = pull(TEST_REPO, TEST_FILE, tmp_path / "models", progress=False)
    assert result.resumed and result.resumes == 1
    first, second = hub.ranges()
    resumed_at = int(second.removeprefix("bytes=").removesuffix("-"))
    assert first is None and 0 < resumed_at <= cut  # from what reached the disk (whole chunks)
    assert result.downloaded_bytes == len(tiny_bytes)  # nothing written twice
    assert result.path.read_bytes() == tiny_bytes


def test_an_interrupted_pull_resumes_on_the_next_run(hub, tmp_path, tiny_bytes):
    models = tmp_path / "models"
    cut = len(tiny_bytes) // 2
    hub.state.drop_after = cut
    with pytest.raises(PullError, match="run the same pull again"):
        pull(TEST_REPO, TEST_FILE, models, progress=False, max_resumes=0)
    part = models / (TEST_FILE + ".part")
    kept = part.stat().st_size
    assert 0 < kept <= cut and not (models / TEST_FILE).exists()
    result = pull(TEST_REPO, TEST_FILE, models, progress=False)
    assert result.resumed and result.downloaded_bytes == len(tiny_bytes) - kept
    assert hub.ranges()[-1] == f"bytes={kept}-"
    assert result.path.read_bytes() == tiny_bytes and not part.exists()


def test_a_partial_file_of_another_digest_is_not_resumed(hub, tmp_path, tiny_bytes):
    models = tmp_path / "models"
    models.mkdir()
    (models / (TEST_FILE + ".part")).write_bytes(b"x" * 1000)
    (models / (TEST_FILE + ".part.json")).write_text(json.dumps({"sha256": "0" * 64, "size": 1000}))
    result = pull(TEST_REPO, TEST_FILE, models, progress=False)
    assert not result.resumed and hub.ranges() == [None]
    assert result.path.read_bytes() == tiny_bytes


def test_a_wrong_digest_is_refused_and_nothing_is_left(hub, tmp_path):
    hub.state.bad_digest = True
    data = tmp_path / "data"
    proc = run_cli("--data-dir", str(data), "model", "pull", f"{TEST_REPO}:{TEST_FILE}", "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["refused_bad_digest"] is True and out["sha256_ok"] is False
    assert "expected" in out["error"] and "deleted" in out["error"]
    assert "Traceback" not in proc.stderr
    assert _files(data / "models") == []


def test_a_sha256_flag_the_hub_contradicts_is_refused_before_downloading(hub, tmp_path):
    with pytest.raises(DigestMismatch, match="nothing downloaded"):
        pull(TEST_REPO, TEST_FILE, tmp_path / "models", sha256="ab" * 32, progress=False)
    assert hub.ranges() == [] and _files(tmp_path / "models") == []


def test_a_file_already_present_is_verified_not_downloaded(hub, tmp_path, tiny_bytes):
    models = tmp_path / "models"
    first = pull(TEST_REPO, TEST_FILE, models, progress=False)
    again = pull(TEST_REPO, TEST_FILE, models, progress=False)
    assert again.already_present and again.downloaded_bytes == 0 and again.sha256 == first.sha256
    assert hub.ranges() == [None]


def test_missing_files_and_bad_specs_get_one_clear_line(hub, tmp_path):
    for spec, words in [("test/tiny:nope.gguf", "not found"), ("no-colon-or-catalog", "not in the catalog"),
                        ("bad:file.gguf", "REPO:FILE")]:
        proc = run_cli("--data-dir", str(tmp_path / "d"), "model", "pull", spec)
        assert proc.returncode == 1 and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_gated_repo_needs_the_token_and_gets_it(hub, tmp_path, tiny_bytes, monkeypatch):
    hub.add("gated/tiny", TEST_FILE, tiny_bytes)
    hub.state.gated["gated/tiny"] = "hf_testtoken"
    with pytest.raises(PullError, match="gated.*HF_TOKEN"):
        pull("gated/tiny", TEST_FILE, tmp_path / "a", progress=False)
    result = pull("gated/tiny", TEST_FILE, tmp_path / "b", progress=False, token="hf_testtoken")
    assert result.path.read_bytes() == tiny_bytes
    sent = [auth for (method, path, _, auth) in hub.state.requests if path.startswith("/gated/")]
    assert sent[-1] == "Bearer hf_testtoken"
    cdn = [auth for (method, path, _, auth) in hub.state.requests if path.startswith("/cdn/")]
    assert cdn and cdn[-1] is None  # the token never goes to the CDN host


def test_record_checksum_replaces_only_that_files_line(tmp_path):
    (tmp_path / SHA256SUMS).write_text(f"{'1' * 64}  other.gguf\n{'2' * 64}  model.gguf\n")
    record_checksum(tmp_path, "model.gguf", "3" * 64)
    assert (tmp_path / SHA256SUMS).read_text() == f"{'1' * 64}  other.gguf\n{'3' * 64}  model.gguf\n"


def test_pull_must_show_line(hub, tmp_path, tiny_bytes):
    """The issue's must-show line: a pull whose connection drops mid-file resumes and verifies;
    the same pull with a wrong advertised digest is refused."""
    hub.state.drop_after = len(tiny_bytes) // 4
    ok = run_cli("--data-dir", str(tmp_path / "ok"), "model", "pull", f"{TEST_REPO}:{TEST_FILE}", "--json",
                 "--quiet")
    assert ok.returncode == 0, ok.stderr
    got = json.loads(ok.stdout.strip().splitlines()[-1])
    hub.state.bad_digest = True
    bad = run_cli("--data-dir", str(tmp_path / "bad"), "model", "pull", f"{TEST_REPO}:{TEST_FILE}", "--json",
                  "--quiet")
    refused = json.loads(bad.stdout.strip().splitlines()[-1])
    line = {"downloaded_bytes": got["downloaded_bytes"], "resumed": got["resumed"],
            "sha256_ok": got["sha256_ok"] and got["sha256"] == hashlib.sha256(tiny_bytes).hexdigest(),
            "refused_bad_digest": bad.returncode == 1 and refused["refused_bad_digest"]
            and _files(tmp_path / "bad" / "models") == []}
    print(json.dumps(line))
    assert line == {"downloaded_bytes": len(tiny_bytes), "resumed": True, "sha256_ok": True,
                    "refused_bad_digest": True}
