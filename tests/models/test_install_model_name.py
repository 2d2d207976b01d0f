"""deploy/install.sh --model-name NAME: the board pulls the model itself with `edge-agent model pull`."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig

from modelkit import REPO_ROOT, TEST_FILE, TEST_REPO

INSTALL = REPO_ROOT / "deploy" / "install.sh"


def run_install(*args: str, script=INSTALL, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ))


def test_dry_run_pulls_a_catalog_model_and_points_the_config_at_it(tmp_path):
    p = tmp_path / "root"
    proc = run_install("--dry-run", "--prefix", str(p), "--model-name", "smollm3-3b")
    assert proc.returncode == 0, proc.stderr
    state = f"{p}/var/lib/edge-agent"
    assert (f"[dry-run] {p}/opt/edge-agent/bin/edge-agent --data-dir {state} model pull smollm3-3b\n"
            in proc.stdout)
    assert f"{state}/models/SmolLM3-3B-Q4_K_M.gguf" in proc.stdout
    # A non-commercial licence is passed on only when the installer was told to accept it.
    research = run_install("--dry-run", "--prefix", str(p), "--model-name", "qwen2.5-3b", "--accept-licence")
    assert research.returncode == 0, research.stderr
    assert "model pull qwen2.5-3b --accept-licence" in research.stdout
    assert not p.exists() or not any(p.rglob("*.gguf"))


def test_unknown_names_and_both_model_options_are_refused(tmp_path):
    bad = run_install("--dry-run", "--prefix", str(tmp_path / "r"), "--model-name", "gpt-9")
    assert bad.returncode != 0 and "not in the catalog" in bad.stderr
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    both = run_install("--dry-run", "--prefix", str(tmp_path / "r"), "--model", str(model), "--model-name", "smollm3-3b")
    assert both.returncode != 0 and "exclude each other" in both.stderr


def test_a_real_install_pulls_from_the_hub_and_doctor_passes_the_model(tmp_path, hub, tiny_bytes):
    """A real run under a prefix (the venv borrows the project's packages, as tests/ops does):
    the model comes from the loopback hub as test/tiny:model.gguf, lands in the models dir with
    its SHA256SUMS line, the config points at it and doctor's model row passes."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for part in ("pyproject.toml", "README.md", "edge_agent", "tools", "skills", "world", "deploy", "systemd"):
        src = REPO_ROOT / part
        if src.is_dir():
            shutil.copytree(src, checkout / part, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copyfile(src, checkout / part)
    prefix = tmp_path / "root"
    venv = prefix / "opt" / "edge-agent"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "zz-borrow-project-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = run_install("--prefix", str(prefix), "--model-name", f"{TEST_REPO}:{TEST_FILE}",
                       script=checkout / "deploy" / "install.sh", timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    models = prefix / "var" / "lib" / "edge-agent" / "models"
    assert (models / TEST_FILE).read_bytes() == tiny_bytes
    digest = hashlib.sha256(tiny_bytes).hexdigest()
    assert f"{digest}  {TEST_FILE}" in (models / "SHA256SUMS").read_text()
    conf = (prefix / "etc" / "edge-agent" / "config.toml").read_text()
    assert f'path = "{models / TEST_FILE}"' in conf
    assert "PASS  model file" in proc.stdout and "sha256 matches SHA256SUMS" in proc.stdout
