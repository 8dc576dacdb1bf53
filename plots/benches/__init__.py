# SPDX-License-Identifier: GPL-2.0
"""The plot modules, one per benchmark: plots/benches/<name>.py draws and
sums up RUN/<name>.csv, as the benchmark bench/<name>.c (or the run step)
writes it.  render.py looks them up here by name and knows none of them.

A plot module has
  ORDER     where its figures and notes go on the page (smaller first);
  FIGURES   {figure name: caption in index.html};
  parts(run) -> parts.Parts: its figure jobs (plots/<fig>.gp each) and
            summary sections, given the run (parts.Run); it adds a note to
            run.notes for what it cannot draw;
  DEFAULTS  (optional) {column: value} for columns a run recorded before
            they existed lacks;
  fixture(...) (optional) rows for the plot tests' fixtures
            (tests/plots/make_fixture.py)."""
import importlib
import pkgutil


def names():
    """The benchmarks that have a plot module."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def module(name):
    """The plot module of benchmark name, None when it has none."""
    if name not in names():
        return None
    return importlib.import_module(f"{__name__}.{name}")


def modules():
    """Every plot module, in page order."""
    return sorted((module(n) for n in names()), key=lambda m: m.ORDER)


def figure_texts():
    """{figure: caption} over every plot module."""
    out = {}
    for m in modules():
        out.update(m.FIGURES)
    return out
