# SPDX-License-Identifier: GPL-2.0
"""What a plot module (plots/benches/<benchmark>.py) gives render.py: the
figures to draw (Job), the summary's tables (Section), and the run they
come from (Run)."""
import os
from dataclasses import dataclass, field

from bench import contract
from plots.table import Table


@dataclass
class Job:
    """One figure: `gnuplot -c plots/SCRIPT DATA RUN/NAME CAPTION TIMING
    BACKINGS EXTRA HOPCOL HOP COLOURS` (see plots/common.gp)."""
    name: str
    script: str
    data: str
    backings: list
    timing: str = ""
    extra: str = ""
    hop_col: str = ""
    hop: str = ""


@dataclass
class Section:
    """One table of the summary.  Sections are shown by rank (ties in the
    order the modules give them): what holds under the run's timing first."""
    title: str
    note: str
    header: list
    rows: list
    rank: float = 0


@dataclass
class Parts:
    jobs: list = field(default_factory=list)
    sections: list = field(default_factory=list)


@dataclass
class Run:
    """A run folder, its meta.json, the labels every figure carries, and
    the notes the summary ends with (plot modules add theirs)."""
    path: str
    meta: dict
    caption: str = ""
    timing: str = ""
    notes: list = field(default_factory=list)
    # the damaged CSVs' problems (file and line): render.py exits 3
    damaged: list = field(default_factory=list)

    @property
    def source(self):
        """meta.json's timing_source: native, kvm, tcg or icount."""
        return self.meta.get("timing_source")

    @property
    def hardware(self):
        return contract.timing_is_hardware(self.source)

    def table(self, bench, defaults=None):
        return Table.read(self.path, bench, defaults)

    def usable(self, bench, what=None, defaults=None):
        """bench's table, or None after a note that what (the figures it
        draws; bench by default) is skipped and why."""
        t = self.table(bench, defaults)
        if not t.ok:
            self.notes.append(f"{what or bench} skipped: {t.problem}")
            if t.damaged:
                self.damaged.append(t.problem)
            return None
        return t

    def exists(self, name):
        return os.path.exists(os.path.join(self.path, name))

    def listed(self, bench):
        """Whether the contract in use lists bench (a pinned, older one may not)."""
        return bench in contract.load().bench_names()
