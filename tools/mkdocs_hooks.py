"""MkDocs hook (``mkdocs.yml``: ``hooks``): the benchmark plots join the site at ``results/``.

The benchmark READMEs are included into ``docs/benchmarks/*.md`` verbatim (pymdownx.snippets) and
show their plots as ``../results/<name>.png``: from ``benchmarks/<suite>/README.md`` that is the
committed ``benchmarks/results/<name>.png``, from ``docs/benchmarks/<suite>.md`` it is the site's
``results/<name>.png``, which this hook provides. One link works in both places, so a README is
included whole, not cut into line ranges around its images (ranges went stale as READMEs grew).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Every PNG of ``benchmarks/results/`` as the site's ``results/<name>.png``."""
    for png in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, f"results/{png.name}", abs_src_path=str(png)))
    return files
