"""`edge-agent model list|pull|use`: the catalog of recommended GGUFs, downloading one, choosing one.

    edge-agent model list [--json]               # catalog, RAM each needs at the window, board fits
    edge-agent model pull NAME | REPO:FILE       # from the hub (HF_ENDPOINT, HF_HOME, HF_TOKEN honoured)
    edge-agent --config FILE model use NAME      # set model.path in the config file
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from edge_agent.llm.catalog import CatalogError, describe, licence_refusal, load_catalog
from edge_agent.llm.pull import DEFAULT_REVISION, MAX_RESUMES, DigestMismatch, PullError, parse_spec, pull

EXIT_FAILED = 1
FIT_MARKS = {True: "yes", False: "no", None: "?"}


def register(sub, parents) -> None:
    p = sub.add_parser("model", parents=parents, help="list, download and choose GGUF models")
    msub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    ls = msub.add_parser("list", parents=parents, help="the catalog with RAM needs and board fits")
    ls.add_argument("--json", action="store_true", help="print the catalog as one JSON object")
    ls.set_defaults(func=run_list)
    pl = msub.add_parser("pull", parents=parents, help="download a catalog model or REPO:FILE, checked by sha256")
    pl.add_argument("spec", metavar="NAME|REPO:FILE", help="a catalog name (see model list) or a hub repo and file")
    pl.add_argument("--revision", default=DEFAULT_REVISION, help=f"branch, tag or commit (default {DEFAULT_REVISION})")
    pl.add_argument("--sha256", help="the digest to insist on (default: the hub's LFS digest)")
    pl.add_argument("--max-resumes", type=int, default=MAX_RESUMES, metavar="N",
                    help=f"Range re-requests after dropped connections (default {MAX_RESUMES})")
    pl.add_argument("--accept-licence", action="store_true",
                    help="pull a model whose licence forbids commercial use (model list marks them)")
    pl.add_argument("--quiet", action="store_true", help="no progress bar")
    pl.add_argument("--json", action="store_true", help="print the result as one JSON object")
    pl.set_defaults(func=run_pull)
    use = msub.add_parser("use", parents=parents, help="set model.path in the config file to a pulled model")
    use.add_argument("spec", metavar="NAME|FILE", help="a catalog name, REPO:FILE or a GGUF in the models dir")
    use.set_defaults(func=run_use)


def run_list(args, settings) -> int:
    from edge_agent.ops import probes

    try:
        catalog = load_catalog()
    except CatalogError as err:
        print(f"edge-agent: {err}", file=sys.stderr)
        return EXIT_FAILED
    here = probes.total_mb()
    rows = [describe(m, catalog, settings, here, settings.models_dir) for m in catalog.models]
    if args.json:
        print(json.dumps({"this_machine": {"ram_mb": round(here) if here else None},
                          "boards": [b.__dict__ for b in catalog.boards], "models": rows}))
        return 0
    boards = [b.name for b in catalog.boards]
    header = ["name", "size GB", "licence", "KV B/tok", f"need MiB@{settings.model.n_ctx}", *boards,
              f"here ({here or 0:.0f} MiB)", "installed"]
    table = [[r["name"], f"{r['size_gb']:.2f}", r["licence"] + (" (non-commercial)" if r["non_commercial"] else ""),
              str(r["kv_bytes_per_token"]), str(r["need_mb"]),
              *(FIT_MARKS[r["fits"][b]] for b in boards), FIT_MARKS[r["fits_here"]],
              "yes" if r.get("installed") else ""] for r in rows]
    widths = [max(len(row[i]) for row in [header, *table]) for i in range(len(header))]
    for row in [header, *table]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print("need = model + KV + saved sessions + logits + runtime + head cache (computed); "
          "sources: edge_agent/llm/models.toml")
    if any(r["non_commercial"] for r in rows):
        print("(non-commercial): the licence forbids commercial use; `model pull` asks for --accept-licence")
    return 0


def _target(spec: str):
    """(repo, file, catalog entry or None) for a pull spec; REPO:FILE of a catalog model is that entry."""
    if ":" in spec:
        repo, file = parse_spec(spec)
        entry = next((m for m in load_catalog().models if (m.repo, m.file) == (repo, file)), None)
        return repo, file, entry
    entry = load_catalog().get(spec)
    return entry.repo, entry.file, entry


def run_pull(args, settings) -> int:
    try:
        repo, file, entry = _target(args.spec)
        refusal = licence_refusal(entry, args.accept_licence)
        if refusal is not None:
            return _pull_failed(args, refusal)
        if entry is not None and entry.bundled:
            from edge_agent.llm.bundled import ensure_bundled_model, expected_sha256

            path = ensure_bundled_model(settings.models_dir)
            from edge_agent.llm.pull import record_checksum
            record_checksum(settings.models_dir, path.name, expected_sha256())
            result = {"path": str(path), "sha256": expected_sha256(), "size": path.stat().st_size,
                      "downloaded_bytes": 0, "resumed": False, "sha256_ok": True, "source": "bundled package"}
        else:
            r = pull(repo, file, settings.models_dir, revision=args.revision, sha256=args.sha256,
                     progress=not args.quiet, max_resumes=args.max_resumes)
            result = {"path": str(r.path), "sha256": r.sha256, "size": r.size, "downloaded_bytes": r.downloaded_bytes,
                      "resumed": r.resumed, "resumes": r.resumes, "already_present": r.already_present,
                      "sha256_ok": True, "source": f"{repo}:{file}@{args.revision}"}
    except (PullError, CatalogError) as err:
        return _pull_failed(args, str(err), digest_refused=isinstance(err, DigestMismatch))
    except OSError as err:  # disk full, permissions: one clear line, no traceback
        return _pull_failed(args, f"{type(err).__name__}: {err}")
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['path']} (sha256 {result['sha256'][:16]}…, recorded in SHA256SUMS)", file=sys.stderr)
        print(result["path"])  # the last stdout line is the path, for scripts (install.sh)
    return 0


def _pull_failed(args, message: str, digest_refused: bool = False) -> int:
    if args.json:
        print(json.dumps({"error": message, "sha256_ok": False, "refused_bad_digest": digest_refused}))
    print(f"edge-agent: model pull: {message}", file=sys.stderr)
    return EXIT_FAILED


def _resolve_local(spec: str, models_dir: Path) -> Path:
    if ":" in spec:
        return models_dir / Path(parse_spec(spec)[1]).name
    try:
        return models_dir / load_catalog().get(spec).file
    except CatalogError:
        candidate = Path(spec)
        return candidate if candidate.is_absolute() else models_dir / candidate.name


_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*(#.*)?$")
_PATH_LINE = re.compile(r"^\s*#?\s*path\s*=")


def set_model_path(config: Path, model_path: Path) -> None:
    """Write model.path into `config`, keeping every other line (and its comments) as it is."""
    lines = config.read_text(encoding="utf-8").splitlines() if config.is_file() else []
    value = f"path = {json.dumps(str(model_path))}"  # a JSON string is a valid TOML basic string
    section, start, end = None, None, len(lines)
    for i, line in enumerate(lines):
        m = _SECTION.match(line)
        if m:
            if section == "model":
                end = i
                break
            section = m.group(1).strip()
            if section == "model":
                start = i
    if start is None:
        lines += ["", "[model]", value]
    else:
        body = range(start + 1, end)
        live = [i for i in body if _PATH_LINE.match(lines[i]) and not lines[i].lstrip().startswith("#")]
        commented = [i for i in body if _PATH_LINE.match(lines[i]) and lines[i].lstrip().startswith("#")]
        if live:
            lines[live[0]] = value
        elif commented:
            lines.insert(commented[-1] + 1, value)
        else:
            lines.insert(start + 1, value)
    tmp = config.with_name(config.name + ".new")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(config)


def run_use(args, settings) -> int:
    from edge_agent.config import ConfigError, config_path_from, load_settings
    from edge_agent.ops.doctor import check_model

    config = config_path_from(explicit=getattr(args, "config", None))
    if config is None:
        print("edge-agent: model use: no config file to write; pass --config FILE or set EDGE_AGENT_CONFIG",
              file=sys.stderr)
        return EXIT_FAILED
    try:
        path = _resolve_local(args.spec, settings.models_dir)
    except PullError as err:
        print(f"edge-agent: model use: {err}", file=sys.stderr)
        return EXIT_FAILED
    check = check_model(path)
    if check.status == "fail":
        print(f"edge-agent: model use: {check.detail} (run `edge-agent model pull {args.spec}` first)", file=sys.stderr)
        return EXIT_FAILED
    before = config.read_text(encoding="utf-8") if config.is_file() else None
    set_model_path(config, path)
    try:
        load_settings(config)
    except ConfigError as err:  # never leave a config the service cannot start with
        if before is None:
            config.unlink()
        else:
            config.write_text(before, encoding="utf-8")
        print(f"edge-agent: model use: {config} would not load afterwards ({err}); left unchanged", file=sys.stderr)
        return EXIT_FAILED
    print(f"model.path = {path} in {config} ({check.status}: {check.detail})")
    return 0
