"""Where the repository's data files live (tools/, skills/, world/), found from the package."""
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TOOLS_DIR = PROJECT_ROOT / "tools"
"""Tool manifests (prompt text), one TOML a tool."""
SKILLS_DIR = PROJECT_ROOT / "skills"
"""Skill files, one Markdown file a skill."""
WORLD_DIR = PROJECT_ROOT / "world"
"""The invented sample household used by quickstart, tests and evaluation."""
