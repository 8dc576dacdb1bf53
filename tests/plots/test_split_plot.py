# SPDX-License-Identifier: GPL-2.0
"""No TLB claim the hardware does not honour (plots/split.py, issue 29
point 3): where a run can tell that huge pages were held as smaller TLB
entries (tlbreach's curves, a KVM guest's RAM on smaller host pages) the
model's walks saved for them are withheld and their latency flagged,
saying why; where it cannot tell (a native run on a VM host, no tlbreach)
they are flagged as unverified.  On copies of the TCG fixture (model
values, no counters) relabelled as hardware-timed runs, with recorded
host_memory and tlbreach outputs."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.plots.test_plots import FIXTURE, RENDER, edit_meta, svg_text, write_csv
from tests.plots.test_tlbreach_plot import BENCH, COLUMNS, CURVES, ZEN4, contract_with, rows

# run-qemu.sh's @meta host_memory for guest RAM on host 2 MB pages
HOST_2M = {"host_pages": "hugetlb", "kernel_page_kb": 2048, "anon_huge_kb_max": 0,
           "guest_ram_mb": 4096, "checked_in": "/proc/PID/smaps of QEMU"}
# tlbreach on a VM whose host backs it with 4 KB pages: the 4 KB stride on
# 2 MB pages knees where the page stride does (as in test_tlbreach_plot)
SPLIT_4K = CURVES[:2] + [("maphugetlb", 2048, 4096, [(64, 1.6)])]


def walks(out):
    """{backing: row text} of the summary's walks section, hop line."""
    text = out[out.index("Page walks saved against devzero"):]
    lines = text[:text.index("\n\n")].splitlines()
    return lines[0], {l.split()[0]: l for l in lines[2:]}


def latency(out):
    text = out[out.index("Latency at the largest working set"):]
    lines = text[:text.index("\n\n")].splitlines()
    return lines[1], {l.split()[0]: l for l in lines[2:]}


class SplitPages(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-split-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.contract = contract_with(os.path.join(self.tmp, "contract.json"), BENCH)
        self.run = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(FIXTURE, "tcg"), self.run)

    def render(self):
        p = subprocess.run(RENDER + [self.run, "--no-link"],
                           capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=self.contract))
        self.assertEqual((p.returncode, p.stderr), (0, ""), p.stdout[-2000:])
        return p.stdout

    def test_kvm_on_host_2m_pages_withholds_the_1g_model(self):
        edit_meta(self.run, timing_source="kvm", host_memory=HOST_2M)
        out = self.render()
        _, w = walks(out)
        for b in ("hugetlbfs-1G", "devhugetlb-1G", "maphugetlb-1G"):
            self.assertIn("withheld", w[b])
            self.assertIn("held as 2 MiB entries: guest RAM on host 2 MiB pages", w[b])
            self.assertNotIn("100%", w[b])
        for b in ("thp", "devhugetlb", "maphugetlb"):
            self.assertNotIn("withheld", w[b])
            self.assertIn("100%", w[b])
        head, lat = latency(out)
        self.assertIn("huge pages' TLB entries", head)
        self.assertIn("held as 2 MiB entries", lat["devhugetlb-1G"])
        self.assertNotIn("held as", lat["devhugetlb"])
        self.assertIn("does not honour", svg_text(os.path.join(self.run, "tlb-model.svg")))

    def test_tlbreach_verdict_withholds_the_2m_model(self):
        edit_meta(self.run, timing_source="native", qemu=None, mode="native",
                  machine={"hypervisor": True})
        write_csv(os.path.join(self.run, "tlbreach.csv"), COLUMNS, rows(SPLIT_4K))
        _, w = walks(self.render())
        for b in ("thp", "hugetlbfs", "devhugetlb", "maphugetlb", "memfd", "shm"):
            self.assertIn("withheld, held as 4 KiB entries: tlbreach's maphugetlb curves",
                          w[b])
        # tlbreach measured no 1 GB backing: unverified, flagged, not withheld
        self.assertIn("unverified: the host is a VM", w["devhugetlb-1G"])
        self.assertIn("100%", w["devhugetlb-1G"])

    def test_tlbreach_model_rows_of_split_sizes_say_so(self):
        edit_meta(self.run, timing_source="kvm", host_memory=HOST_2M,
                  other={"pmu": {"preset": "zen4"}, "tlb_geometry": ZEN4})
        write_csv(os.path.join(self.run, "tlbreach.csv"), COLUMNS, rows(CURVES))
        out = self.render()
        text = out[out.index("TLB reach from timing"):]
        model = {l.split()[1] + " " + l.split()[2]: l
                 for l in text[:text.index("\n\n")].splitlines() if l.startswith("  model ")}
        self.assertIn("not what this hardware held: held as 2 MiB entries", model["1 GiB"])
        self.assertNotIn("not what this hardware held", model["2 MiB"])

    def test_tlbreach_holding_2m_whole_flags_nothing_for_2m(self):
        edit_meta(self.run, timing_source="native", qemu=None, mode="native",
                  machine={"hypervisor": True})
        write_csv(os.path.join(self.run, "tlbreach.csv"), COLUMNS, rows(CURVES))
        _, w = walks(self.render())
        self.assertNotIn("withheld", w["thp"])
        self.assertNotIn("unverified", w["thp"])

    def test_vm_host_without_tlbreach_flags_every_huge_size(self):
        edit_meta(self.run, timing_source="native", qemu=None, mode="native",
                  machine={"hypervisor": True})
        _, w = walks(self.render())
        for b in ("thp", "devhugetlb-1G"):
            self.assertIn("unverified: the host is a VM", w[b])

    def test_bare_metal_and_tcg_flag_nothing(self):
        out = self.render()     # TCG: the model is of the named geometry
        _, w = walks(out)
        self.assertFalse([l for l in w.values() if "withheld" in l or "unverified" in l])
        edit_meta(self.run, timing_source="native", qemu=None, mode="native",
                  machine={"hypervisor": False})
        _, w = walks(self.render())
        self.assertFalse([l for l in w.values() if "withheld" in l or "unverified" in l])


if __name__ == "__main__":
    unittest.main()
