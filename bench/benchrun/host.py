# SPDX-License-Identifier: GPL-2.0
"""The host's state: what can move its numbers (machine_state: cpufreq,
boost, SMT, THP, paging, NUMA), for meta.json, and the THP knobs a native
run with a THP backing sets and restores (ThpSettings)."""

import glob
import os
import platform
import re
import subprocess
import sys

from .base import ROOT, SavedHostState, bracketed, read_text


def host_cpu(path="/proc/cpuinfo"):
    """The host CPU's model name."""
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name":
                    return v.strip()
    except OSError:
        pass
    return platform.processor()


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return (rev or "unknown") + ("-dirty" if dirty else "")
    except OSError:
        return "unknown"


def qemu_version(arch="x86_64"):
    qemu = {"arm64": "qemu-system-aarch64"}.get(arch, "qemu-system-x86_64")
    try:
        out = subprocess.run([qemu, "--version"],
                             capture_output=True, text=True).stdout
        return out.splitlines()[0].strip() if out else None
    except OSError:
        return None


def mem_available(root="/"):
    """MemAvailable in bytes (/proc/meminfo says kB); None where unread."""
    try:
        with open(os.path.join(root, "proc", "meminfo")) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def loadavg(root="/"):
    text = read_text(os.path.join(root, "proc", "loadavg"))
    return [float(x) for x in text.split()[:3]] if text else None


def cpu_flags(root="/"):
    """The first flags line of /proc/cpuinfo as a set (x86); None where
    there is none (arm64 says "Features")."""
    text = read_text(os.path.join(root, "proc", "cpuinfo")) or ""
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return None


def hypervisor(root="/"):
    """True when /proc/cpuinfo's flags include "hypervisor" (a VM)."""
    return "hypervisor" in (cpu_flags(root) or ())


def paging_state(root="/"):
    """What changes the cost of a page walk or of a TLB miss besides the
    TLB: KPTI (page-table isolation: every kernel entry switches page
    tables, so user TLB entries do not survive it without PCID), la57
    (5-level paging, x86: the kernel clears the flag when it runs with 4
    levels), the mTHP knobs of each size (a 4 KB backing may get 16-2048
    KB folios) and NUMA balancing (it unmaps pages to sample them, which
    adds faults and TLB flushes).  None where the host does not say."""
    meltdown = read_text(os.path.join(root, "sys", "devices", "system",
                                      "cpu", "vulnerabilities", "meltdown"))
    flags = cpu_flags(root)
    mthp = {}
    for d in sorted(glob.glob(os.path.join(
            root, "sys", "kernel", "mm", "transparent_hugepage",
            "hugepages-*kB")), key=lambda d: int(d.rpartition("-")[2][:-2])):
        knobs = {f: bracketed(read_text(os.path.join(d, f)))
                 for f in sorted(os.listdir(d))
                 if os.path.isfile(os.path.join(d, f))}
        mthp[os.path.basename(d).partition("-")[2]] = knobs
    balancing = read_text(os.path.join(root, "proc", "sys", "kernel",
                                       "numa_balancing"))
    return {
        "kpti": None if meltdown is None else "PTI" in meltdown,
        "la57": None if flags is None else "la57" in flags,
        "thp_mthp": mthp or None,
        "numa_balancing": int(balancing) if balancing else None,
    }


def machine_state(root="/"):
    """What can move the numbers of this host: cpufreq governors (a count
    per governor), boost, SMT, THP, whether it is a virtual machine and
    paging_state().
    A value is null where the host does not offer it."""
    cpu = os.path.join(root, "sys", "devices", "system", "cpu")
    govs = {}
    for path in sorted(glob.glob(os.path.join(
            cpu, "cpu[0-9]*", "cpufreq", "scaling_governor"))):
        g = read_text(path)
        govs[g] = govs.get(g, 0) + 1
    boost = read_text(os.path.join(cpu, "cpufreq", "boost"))
    no_turbo = read_text(os.path.join(cpu, "intel_pstate", "no_turbo"))
    if boost is None and no_turbo is not None:
        boost = "0" if no_turbo == "1" else "1"
    thp = ThpSettings(root).read()
    return {
        "cpufreq_governor": govs or None,
        "boost": {"1": True, "0": False}.get(boost),
        "smt_active": {"1": True, "0": False}.get(
            read_text(os.path.join(cpu, "smt", "active"))),
        "thp_enabled": thp.pop("enabled"),
        "thp_defrag": thp.pop("defrag"),
        "thp_khugepaged": {k.partition("/")[2]: v for k, v in thp.items()
                           if v is not None} or None,
        "hypervisor": hypervisor(root),
        "numa_nodes": len(numa_nodes(root)) or None,
        **paging_state(root),
    }


def numa_nodes(root="/"):
    """The host's NUMA nodes' numbers, from sysfs ([] without NUMA)."""
    return sorted(int(os.path.basename(d)[4:]) for d in glob.glob(
        os.path.join(root, "sys", "devices", "system", "node", "node[0-9]*")))


# A node's own hugetlb pool: with more than one node the native run raises
# the pools of the node the runner pins to (its mappings are bound there,
# bench/numa.h) rather than the global nr_hugepages, which the kernel
# spreads over all nodes.
NODE_POOL = os.path.join("sys", "devices", "system", "node", "node%d",
                         "hugepages", "hugepages-%%dkB", "nr_hugepages")


def pinned_node(bindir, root="/"):
    """The node of the CPU the runner pins to (benchtool pickcpu, the same
    choice), on a host with more than one node; None otherwise."""
    if len(numa_nodes(root)) < 2:
        return None
    allowed = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    p = subprocess.run([os.path.join(bindir, "benchtool"), "pickcpu",
                        "--sysfs", root, "--allowed", allowed],
                       capture_output=True, text=True)
    m = re.match(r"cpu (\d+) ", p.stdout)
    nodes = glob.glob(os.path.join(root, "sys", "devices", "system", "cpu",
                                   "cpu%s" % (m.group(1) if m else "-"),
                                   "node[0-9]*"))
    return int(os.path.basename(nodes[0])[4:]) if nodes else None


class ThpSettings(SavedHostState):
    """The transparent huge page knobs of a host: read for meta.json, and
    set for a run that measures the `thp` backing, which maps with
    MADV_HUGEPAGE.  That advice takes effect only when `enabled` is
    `always` or `madvise`, and a madvised fault compacts memory to get a
    huge page only when `defrag` is `always`, `madvise` or `defer+madvise`
    (with `defer` or `never` it falls back to 4 KB pages once memory is
    fragmented, and the backing fails its page-size check).  Where a knob
    allows neither, it is set to `madvise`: the least change that gives
    madvised regions huge pages and direct compaction, leaving every other
    process's memory as it was (`always` would not).  khugepaged is only
    recorded: the runner touches a mapping whole right after mapping it,
    so its huge pages come from the fault, not from khugepaged's scans.
    restore() puts back what apply() changed (call it from finally; it is
    idempotent)."""

    DIR = os.path.join("sys", "kernel", "mm", "transparent_hugepage")
    KNOBS = ("enabled", "defrag", "khugepaged/defrag",
             "khugepaged/pages_to_scan", "khugepaged/scan_sleep_millisecs")
    # knob: (values that serve MADV_HUGEPAGE, the value set otherwise)
    NEED = {"enabled": (("always", "madvise"), "madvise"),
            "defrag": (("always", "defer+madvise", "madvise"), "madvise")}

    def __init__(self, root="/"):
        super().__init__()
        self.dir = os.path.join(root, self.DIR)

    def read(self):
        """{knob: value} (the chosen one of a choice file); None where the
        kernel has no such file."""
        return {k: bracketed(read_text(os.path.join(self.dir, k)))
                for k in self.KNOBS}

    def _write(self, knob, value):
        with open(os.path.join(self.dir, knob), "w") as f:
            f.write(value + "\n")

    def apply(self):
        """Sets what the thp backing needs, under the host-state lock
        (bench/hostlock.py) until restore(); returns the values in force."""
        self.hold()
        cur = self.read()
        for knob, (ok, want) in self.NEED.items():
            if cur[knob] is None or cur[knob] in ok:
                continue
            try:
                self._write(knob, want)
                self.saved.setdefault(knob, cur[knob])
                print("bench: THP %s set from %s to %s for the thp backing"
                      % (knob, cur[knob], want))
            except OSError as e:
                print("bench: cannot set THP %s to %s (%s): the thp backing "
                      "may fail its page-size check" % (knob, want, e),
                      file=sys.stderr)
        return {k: v for k, v in self.read().items() if k in self.NEED}

    def _what(self, knob, value):
        return "THP %s (want %s)" % (knob, value)
