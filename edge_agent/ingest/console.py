"""How ingestion commands talk to the terminal: progress on stderr, one line a reject, a summary."""
from __future__ import annotations

import sys
from typing import TextIO

from edge_agent.ingest.report import ImportReport, ProgressBar, print_rejects
from edge_agent.store.files import IndexReport


def progress_factory(stream: TextIO | None = None):
    """label -> ProgressBar on stderr."""
    return lambda label: ProgressBar(label, stream or sys.stderr)


def index_summary(report: IndexReport) -> str:
    return (f"files on {report.device}: {report.scanned} found, {report.indexed} indexed, "
            f"{report.unchanged} unchanged, {report.removed} removed, {len(report.rejects)} rejected")


def finish_import(reports: list[ImportReport], problems: list[str] | None = None,
                  stream: TextIO | None = None) -> int:
    """Print rejects and summaries; exit code 1 only when nothing at all could be read."""
    stream = stream or sys.stderr
    for problem in problems or []:
        stream.write(f"error: {problem}\n")
    rejects = [r for rep in reports for r in rep.rejects]
    print_rejects(rejects, stream)
    for rep in reports:
        stream.write(rep.summary() + "\n")
    stream.write(f"{len(rejects)} rejected\n")
    return 0 if sum(rep.read for rep in reports) else 1


def import_files(settings, paths, label: str, importer) -> int:
    """Import each file with a progress bar; a file that cannot be read is reported and the rest
    still import. `importer(store, path, bar)` imports one file and returns its ImportReport."""
    import asyncio

    from edge_agent.ingest.jsonl import SourceError
    from edge_agent.store import Store

    async def main() -> int:
        reports, problems = [], []
        async with Store.open(settings.db_path) as store:
            for path in paths:
                bar = progress_factory()(f"{label} {path.name}")
                try:
                    reports.append(await importer(store, path, bar))
                except SourceError as err:
                    problems.append(str(err))
                finally:
                    bar.finish()
        return finish_import(reports, problems)

    return asyncio.run(main())
