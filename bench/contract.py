#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The suite's contract, as Python reads it: the one module that knows it.

    python3 bench/contract.py shell     shell assignments for run-qemu.sh
    python3 bench/contract.py guest-files ARCH   its default kernel, initramfs

What is C's comes from `build/bench/benchtool contract` (bench/benchtool.c
prints the runner's tables as JSON): the benchmarks (binary, CSV columns,
the key a point is matched on, the metric compare compares), the
backings in display order (page size, colour, the hugetlb pool they draw
on) and the real-program step's backings and CSV columns (realprog).  A
new backing or benchmark is a row in those tables; nothing here changes.

What is not C's lives below: what each timing source means, run-qemu.sh's
exit statuses and the console pattern that marks a kernel splat.
"""
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHTOOL = os.path.join("build", "bench", "benchtool")


class ContractError(Exception):
    """The contract could not be read; the message names cause and fix."""


# Where the time numbers of a run come from (meta.json "timing_source"):
# a label for captions and tables, and whether it is hardware time.  Under
# tcg and icount latency is emulated: no figure or summary may present it
# as what a CPU does.
TIMING = {
    "native": ("wall time on the host (hardware)", True),
    "kvm": ("wall time in a KVM guest (hardware, through a virtual machine)",
            True),
    "tcg": ("TCG: emulated timing, not hardware", False),
    "icount": ("instruction-count time (QEMU -icount), not hardware", False),
}
# Said in every figure of a native run on a host that is a virtual machine.
HYPERVISOR_NOTE = ("host is a virtual machine: its page walks are "
                   "two-dimensional (guest and host page tables)")


def timing_label(source):
    if source in TIMING:
        return TIMING[source][0]
    return "timing source %r" % source if source else \
        "timing source not recorded"


def timing_is_hardware(source):
    return source in TIMING and TIMING[source][1]


# The kernel and initramfs run-qemu.sh boots by default for each --arch,
# relative to the project root (the Makefile builds them there and asks
# `contract.py guest-files ARCH` where; run-qemu.sh reads them from shell()).
GUEST_FILES = {
    "x86_64": ("build/kernel/bzImage", "build/initramfs.cpio"),
    "arm64": ("build/kernel/Image-arm64", "build/initramfs-arm64.cpio"),
}


class Pool:
    """One hugetlb page size: its pages in kB, its name on the kernel
    command line (hugepagesz=), run-qemu.sh's option for its pool and that
    option's default, and the guest architectures that have it."""

    def __init__(self, kb, name, option, default, arches):
        self.kb, self.name, self.option = kb, name, option
        self.default, self.arches = default, arches

    @property
    def key(self):
        """The profile's key for its page count (bench/run.py)."""
        return self.option.lstrip("-").replace("-", "_")


# The hugetlb page sizes, smallest first: the one table run-qemu.sh,
# bench/run.py and the tests take them from.  With 4 KB granules arm64 has
# 64 KB and 32 MB pages (contiguous PTEs and PMDs) besides the 2 MB and
# 1 GB block entries; x86_64 has 2 MB and 1 GB.  A backing's pool_kb (the
# C table) must be one of them (Contract checks it).
POOLS = (
    Pool(64, "64K", "--hugepages-64k", 64, ("arm64",)),
    Pool(2048, "2M", "--hugepages", 64, ("x86_64", "arm64")),
    Pool(32768, "32M", "--hugepages-32m", 4, ("arm64",)),
    Pool(1048576, "1G", "--hugepages-1g", 0, ("x86_64", "arm64")),
)
POOL = {p.kb: p for p in POOLS}
ARCHES = tuple(GUEST_FILES)


def arch_pools(arch):
    """The page sizes (kB) arch's guest has, smallest first."""
    return tuple(p.kb for p in POOLS if arch in p.arches)

# run-qemu.sh's exit statuses beyond the guest command's own, with the
# reason bench/run.py and the tests report for each.
QEMU_EXIT = {
    "USAGE": (2, "bad usage of run-qemu.sh"),
    "NOPOOL": (120, "huge pages could not be preallocated"),
    "HOSTPAGES": (121, "guest RAM is not on the host pages asked for"),
    "CLOCK": (122, "guest TSC miscalibrated on every boot (host too loaded)"),
    "TIMEOUT": (124, "guest timed out"),
    "SPLAT": (125, "guest kernel panic/oops/BUG/WARNING"),
    "NOSTATUS": (126, "guest died without reporting a status (QEMU killed?)"),
    "INTERRUPTED": (130, "interrupted"),
}
QEMU_EXIT_REASON = {code: why for code, why in QEMU_EXIT.values()}

# A console line matching this is a kernel splat: a test fails, a run is
# refused.  Lockdep's reports start with "WARNING:" or "INFO:", KFENCE's
# with "BUG: KFENCE".  Plain alternation, so grep -E and Python's re read
# it the same way.
SPLAT_RE = ("Kernel panic|Oops|BUG:|kernel BUG|WARNING:|INFO:|"
            "general protection fault|UBSAN|KASAN|"
            "circular locking dependency|possible recursive locking|"
            "suspicious RCU usage|Bad page")
SPLAT = re.compile(SPLAT_RE)


def shell():
    """Shell assignments of what run-qemu.sh needs: exit statuses, the
    splat pattern, the pool table as arrays (POOL_KB, POOL_NAME, POOL_OPT,
    POOL_DEFAULT, POOL_ARCHES: one element per page size) and the default
    guest files (GUEST_KERNEL_<arch>, GUEST_INITRD_<arch>)."""
    lines = ["QEMU_EXIT_%s=%d" % (name, code)
             for name, (code, _) in QEMU_EXIT.items()]
    lines.append("SPLAT_RE=" + shlex.quote(SPLAT_RE))
    for var, get in (("KB", lambda p: p.kb), ("NAME", lambda p: p.name),
                     ("OPT", lambda p: p.option),
                     ("DEFAULT", lambda p: p.default),
                     ("ARCHES", lambda p: " ".join(p.arches))):
        lines.append("POOL_%s=(%s)" % (var, " ".join(
            shlex.quote(str(get(p))) for p in POOLS)))
    for arch, (kernel, initrd) in GUEST_FILES.items():
        lines.append("GUEST_KERNEL_%s=%s" % (arch, shlex.quote(kernel)))
        lines.append("GUEST_INITRD_%s=%s" % (arch, shlex.quote(initrd)))
    return "\n".join(lines) + "\n"


# What every table of rows has (bench/rows.h), a benchmark's or realprog's
TABLE_KEYS = ("name", "binary", "columns")
BENCH_KEYS = TABLE_KEYS + ("key", "metric", "lower_is_better")
BACKING_KEYS = ("name", "page_kb", "colour", "pool_kb")


class Contract:
    """The benchmarks and backings, in the order benchtool lists them."""

    def __init__(self, data, source):
        self.source = source
        try:
            self.benches = list(data["benches"])
            self.backings = list(data["backings"])
        except (KeyError, TypeError):
            raise ContractError("%s: no \"benches\" and \"backings\" lists"
                                % source)
        for kind, items, keys in (("bench", self.benches, BENCH_KEYS),
                                  ("backing", self.backings, BACKING_KEYS)):
            for item in items:
                missing = [k for k in keys if k not in item]
                if missing:
                    raise ContractError("%s: %s %r lacks %s" % (
                        source, kind, item.get("name"), ", ".join(missing)))
        for b in self.backings:
            if b["pool_kb"] and b["pool_kb"] not in POOL:
                raise ContractError(
                    "%s: backing %r draws on a %d kB pool, which "
                    "bench/contract.py's POOLS lacks: add that page size "
                    "there" % (source, b["name"], b["pool_kb"]))
        self._bench = {b["name"]: b for b in self.benches}
        self._backing = {b["name"]: b for b in self.backings}
        # realprog's own list (bench/realprog/backings.h): "off" and
        # "none", then rows of the backing table
        self.realprog_backings = list(data.get("realprog_backings") or ())
        if not self.realprog_backings:
            raise ContractError("%s: no \"realprog_backings\" list (a "
                                "benchtool older than bench/realprog/"
                                "backings.h: rebuild it)" % source)
        # realprog's table of rows (bench/realprog/table.h): its columns
        # as a benchmark's are
        self.realprog = data.get("realprog")
        if not isinstance(self.realprog, dict) or \
                any(k not in self.realprog for k in TABLE_KEYS):
            raise ContractError("%s: no \"realprog\" table with %s (a "
                                "benchtool older than bench/realprog/"
                                "table.h: rebuild it)" % (
                                    source, ", ".join(TABLE_KEYS)))

    def bench_names(self):
        return [b["name"] for b in self.benches]

    def backing_names(self):
        return [b["name"] for b in self.backings]

    def bench(self, name):
        try:
            return self._bench[name]
        except KeyError:
            raise ContractError("no benchmark %r (benchtool contract lists "
                                "%s)" % (name, ", ".join(self.bench_names())))

    def backing(self, name):
        try:
            return self._backing[name]
        except KeyError:
            raise ContractError("no backing %r (benchtool contract lists %s)"
                                % (name, ", ".join(self.backing_names())))

    def order_key(self, name):
        """Display order: benchtool's; names it does not know come last."""
        names = self.backing_names()
        return (names.index(name), "") if name in names else \
            (len(names), name)

    def colour(self, name):
        b = self._backing.get(name)
        return b["colour"] if b else "#7F7F7F"

    def needs_pool(self, name):
        """The hugetlb pool (in kB pages) a backing draws on, 0 for none."""
        return self.backing(name)["pool_kb"]

    def needs_thp(self, name):
        """Whether a backing advises MADV_HUGEPAGE, so that a native run
        sets the host's THP knobs for it (bench/run.py ThpSettings)."""
        return bool(self.backing(name).get("thp"))

    def arrays(self, name):
        """How many equal arrays of whole 4 KB pages a benchmark's working
        set is (streamk: STREAM's three); 1 where the export says none."""
        return self.bench(name).get("arrays", 1)

    def has_option(self, bench, option):
        """Whether a benchmark takes --option (its own, not the runner's)."""
        return any(o["name"] == option
                   for o in self.bench(bench).get("options", ()))


_cache = {}


def build_benchtool(root):
    """`make build/bench/benchtool` in root: a no-op when it is current.
    Built for real even under `make -n bench`: bench-check runs this under
    make's MAKEFLAGS, whose n would otherwise print the compile and leave
    no benchtool to ask (a traceback on a fresh clone)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    try:
        p = subprocess.run(["make", "-s", "--no-print-directory", "-C", root,
                            BENCHTOOL], capture_output=True, text=True,
                           env=env)
    except OSError as e:
        raise ContractError("cannot run make to build %s: %s" % (BENCHTOOL, e))
    if p.returncode:
        raise ContractError("`make %s` in %s failed: %s" % (
            BENCHTOOL, root, (p.stdout + p.stderr).strip()[-400:]))


def load(path=None, root=ROOT):
    """The contract from a JSON file (path, else $BENCH_CONTRACT) or from
    root's benchtool (built through the Makefile first, so that it matches
    the tables in bench/).  The tests pin their fixtures to a JSON file."""
    path = path or os.environ.get("BENCH_CONTRACT")
    key = (path, root)
    if key in _cache:
        return _cache[key]
    if path:
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            raise ContractError("cannot read the contract %s: %s" % (path, e))
        source = path
    else:
        tool = os.path.join(root, BENCHTOOL)
        build_benchtool(root)
        p = subprocess.run([tool, "contract"], capture_output=True, text=True)
        if p.returncode:
            raise ContractError("`%s contract` failed (exit %d): %s" % (
                tool, p.returncode, p.stderr.strip()[-300:]))
        text, source = p.stdout, tool + " contract"
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ContractError("%s is not JSON: %s" % (source, e))
    _cache[key] = Contract(data, source)
    return _cache[key]


def main(argv):
    if argv == ["shell"]:
        sys.stdout.write(shell())
        return 0
    if len(argv) == 2 and argv[0] == "guest-files" and \
            argv[1] in GUEST_FILES:
        print(" ".join(GUEST_FILES[argv[1]]))
        return 0
    print("usage: contract.py shell | guest-files %s" % "|".join(ARCHES),
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
