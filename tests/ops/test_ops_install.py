"""deploy/install.sh: syntax, a dry run under a prefix that lists every action and changes nothing."""
from __future__ import annotations

import shutil
import subprocess

from ops_helpers import REPO, cli_env

INSTALL = REPO / "deploy" / "install.sh"


def run_install(*args, script=INSTALL, timeout=120):
    env = cli_env()
    env.pop("LLAMA_CMAKE_ARGS", None)  # the board's default build flags
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_script_parses():
    proc = subprocess.run(["bash", "-n", str(INSTALL)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_dry_run_with_prefix_lists_the_key_actions_and_changes_nothing(tmp_path):
    prefix = tmp_path / "root"
    proc = run_install("--dry-run", "--prefix", str(prefix))
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    p = str(prefix)
    expected = [
        "==> apt packages: python3-venv python3-dev build-essential cmake git mosquitto mosquitto-clients",
        f"[dry-run] python3 -m venv {p}/opt/edge-agent",
        "CMAKE_ARGS=\"-DGGML_NATIVE=ON",
        "--no-binary llama-cpp-python",
        f"[dry-run] cp -a {REPO}/edge_agent {p}/opt/edge-agent/src.new/",
        f"[dry-run] {p}/opt/edge-agent/bin/python -m pip install --quiet -e {p}/opt/edge-agent/src\\[model\\]",
        f"g.assemble\\(\\'{p}/var/lib/edge-agent/models/gemma-3-270m-q4_k_m.gguf\\'",
        f"verify sha256 of {p}/var/lib/edge-agent/models/gemma-3-270m-q4_k_m.gguf",
        f"[dry-run] write {p}/etc/edge-agent/config.toml (mode 0640",
        f"[dry-run] write {p}/etc/systemd/system/edge-agent.service (mode 0644",
        f"[dry-run] write {p}/etc/systemd/system/edge-agent-files.service (mode 0644",
        f"edge_agent.ops.sizing --config {p}/etc/edge-agent/config.toml > {p}/etc/systemd/system/edge-agent.service.d/memory.conf",
        f"edge_agent.ops.mosquitto_dropin --data-dir {p}/var/lib/edge-agent",
        f"> {p}/etc/mosquitto/conf.d/edge-agent.conf",
        "pair add pi --role device",
        "pair add phone --role client",
        f"[dry-run] systemctl --root={p} enable edge-agent.service",
        "==> done",
    ]
    for fragment in expected:
        assert fragment in out, f"missing from the dry run: {fragment}"
    assert not prefix.exists()  # a dry run changes nothing


def test_dry_run_keeps_an_existing_config_and_enables_the_file_peer(tmp_path):
    prefix = tmp_path / "root"
    conf = prefix / "etc" / "edge-agent" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('device_id = "kitchen"\n')
    proc = run_install("--dry-run", "--prefix", str(prefix), "--files", "--client", "laptop")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exists, kept as it is" in proc.stdout
    assert "pair add kitchen --role device" in proc.stdout and "pair add laptop --role client" in proc.stdout
    assert "enable edge-agent-files.service" in proc.stdout
    assert conf.read_text() == 'device_id = "kitchen"\n'


def test_a_given_model_is_checked_against_its_sha256(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 100)
    proc = run_install("--dry-run", "--prefix", str(tmp_path / "root"), "--model", str(model), "--sha256", "0" * 64)
    assert proc.returncode == 1 and "sha256 does not match" in proc.stderr
    import hashlib
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    ok = run_install("--dry-run", "--prefix", str(tmp_path / "root"), "--model", str(model), "--sha256", digest)
    assert ok.returncode == 0, ok.stderr
    assert f"[dry-run] install -m 0640 {model} {tmp_path}/root/var/lib/edge-agent/models/m.gguf" in ok.stdout


def test_missing_mosquitto_template_fails_clearly(tmp_path):
    tree = tmp_path / "src"
    for rel in ("deploy/install.sh", "deploy/config.example.toml", "pyproject.toml",
                "systemd/edge-agent.service", "systemd/edge-agent-files.service"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / rel, tree / rel)
    proc = run_install("--dry-run", "--prefix", str(tmp_path / "root"), script=tree / "deploy" / "install.sh")
    assert proc.returncode == 1
    assert "missing the Mosquitto template" in proc.stderr and "deploy/mosquitto" in proc.stderr


def test_unknown_option_is_refused():
    proc = run_install("--frobnicate")
    assert proc.returncode == 1 and "unknown option: --frobnicate" in proc.stderr


def test_real_install_under_a_prefix_then_a_second_run_changes_nothing(tmp_path):
    """A real (not dry) run: the venv borrows the project's built packages through a .pth file so
    llama-cpp-python is not compiled again; everything else is done for real under the prefix."""
    import sys
    import sysconfig

    # A frozen copy of the checkout, so the second run sees exactly the same source.
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for part in ("pyproject.toml", "README.md", "edge_agent", "tools", "skills", "world", "deploy", "systemd"):
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, checkout / part, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copyfile(src, checkout / part)
    (checkout / "deploy" / "install.sh").chmod(0o755)
    prefix = tmp_path / "root"
    venv = prefix / "opt" / "edge-agent"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "zz-borrow-project-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = checkout / "deploy" / "install.sh"
    first = run_install("--prefix", str(prefix), script=script, timeout=600)
    print(first.stdout[-3000:])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    conf = prefix / "etc" / "edge-agent" / "config.toml"
    text = conf.read_text()
    assert f'data_dir = "{prefix}/var/lib/edge-agent"' in text and 'username = "pi"' in text
    unit = (prefix / "etc" / "systemd" / "system" / "edge-agent.service").read_text()
    assert f"ExecStart={venv}/bin/edge-agent --config {conf} serve" in unit
    verify = subprocess.run(["systemd-analyze", "verify", "--man=no",
                             str(prefix / "etc" / "systemd" / "system" / "edge-agent.service")],
                            capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0, verify.stderr  # the installed unit is valid and its binary exists
    memory = (prefix / "etc" / "systemd" / "system" / "edge-agent.service.d" / "memory.conf").read_text()
    assert "MemoryHigh=" in memory and "MemoryMax=" in memory
    assert (prefix / "etc" / "systemd" / "system" / "multi-user.target.wants" / "edge-agent.service").is_symlink()
    models = prefix / "var" / "lib" / "edge-agent" / "models"
    assert "gemma-3-270m-q4_k_m.gguf" in (models / "SHA256SUMS").read_text()
    assert (prefix / "var" / "lib" / "edge-agent" / "pairing" / "credentials" / "phone.toml").is_file()
    assert "PASS  model file" in first.stdout  # doctor ran on the result
    # The service runs the snapshot in the prefix, with its prompt data beside the package.
    probe = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import edge_agent.paths as p; print(p.PROJECT_ROOT, p.TOOLS_DIR.is_dir())"],
                           capture_output=True, text=True, cwd="/", timeout=60)
    assert probe.stdout.split() == [str(venv / "src"), "True"], probe.stderr
    second = run_install("--prefix", str(prefix), script=script, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "wrote " not in second.stdout and "[dry-run]" not in second.stdout
    for done in ("ok: exists, kept as it is", "ok: up to date", "ok: present, sha256 matches",
                 "ok: phone already paired", "ok: edge-agent.service enabled"):
        assert done in second.stdout
    assert conf.read_text() == text
