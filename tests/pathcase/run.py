#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Path clients: what each way to give huge pages to an unmodified program
that maps a path needs, shown in the guest as an unprivileged user.

The programs are real and unmodified: Debian's QEMU (memory-backend-file,
mem-path=PATH, prealloc, -S) and fio (iomem=mmaphuge:PATH and friends),
bundled with their libraries and unpacked in the guest.  job.sh runs each
through asuser (uid 1000, no groups) and reads the mapping's smaps; this
file holds what every way must show, checks it and prints the table:

  way                       root  mount  wrapper  code
  /dev/hugetlb              no    no     no       no
  hugetlbfs /dev/hugepages  yes   yes    no       no   (user cannot create a file)
  memfd /proc/self/fd/N     no    no     yes      no
  THP, /dev/zero private    no with enabled=madvise for QEMU (it advises);
                            fio cannot map /dev/zero privately
  THP, /dev/zero shared     yes (shmem_enabled)

Huge pages are counted from smaps (Shared_Hugetlb + Private_Hugetlb,
AnonHugePages, ShmemPmdMapped of the mapping of the buffer's exact size),
never taken from a call's success.  --device /dev/zero puts /dev/zero
where the node was: the device rows must then fail (that is how the test
was seen to fail).  Ends with "N passed, N failed, N skipped".
"""
import argparse
import os
import re
import subprocess
import sys
import time

from tests.harness import Tally
from bench.contract import GUEST_FILES, QEMU_EXIT_REASON

HERE = os.path.dirname(os.path.abspath(__file__))

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "build", "pathcase")
QEMU = "/usr/bin/qemu-system-x86_64"
QEMU_TCG = "/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so"
FIO = "/usr/bin/fio"
QEMU_KB, FIO_KB = 42 * 1024, 6 * 1024   # job.sh's QMB and FMB

# Each run of job.sh: (what it must show, its check on
# (state, hugetlb_kb, anonhuge_kb, shmempmd_kb), the buffer's size).
HUGETLB = ("mapped on huge pages (Hugetlb = size)",
           lambda s, h, a, m, kb: s == "mapped" and h == kb)
REFUSED = ("refused: the program exits", lambda s, h, a, m, kb: s == "exited")
THP = ("mapped, some AnonHugePages", lambda s, h, a, m, kb: s == "mapped" and a > 0 and h == 0)
NO_THP = ("mapped, no huge pages", lambda s, h, a, m, kb: s == "mapped" and h == a == m == 0)
SHMEM_THP = ("mapped, some ShmemPmdMapped", lambda s, h, a, m, kb: s == "mapped" and m > 0)
EXPECT = {
    "dev-qemu": HUGETLB, "dev-fio": HUGETLB,
    "hugetlbfs-qemu-user": REFUSED, "hugetlbfs-fio-user": REFUSED,
    "hugetlbfs-qemu-dir": HUGETLB, "hugetlbfs-fio-dir": HUGETLB,
    "memfd-qemu-nowrap": REFUSED, "memfd-qemu": HUGETLB,
    "memfd-fio-nowrap": REFUSED, "memfd-fio": HUGETLB,
    "thp-qemu-private": THP, "thp-fio-private": REFUSED,
    "thp-qemu-private-never": NO_THP,
    "thp-qemu-shared": NO_THP, "thp-fio-shared": NO_THP,
    "thp-qemu-shared-always": SHMEM_THP, "thp-fio-shared-always": SHMEM_THP,
    "own-qemu": HUGETLB, "own-fio": HUGETLB,
}

# The table, as the cover letter prints it: each way, what it needs
# (root, a mount, a wrapper, a code change, an option of the program
# besides the path; [n] is a note there) and the runs that show it for
# QEMU and for fio.  The device's option is QEMU's align=2M ([6]).  The checks above prove the
# "needs": a refused run as the user before root's step or without the
# wrapper, a mapped one after.
TABLE = [
    ("/dev/hugetlb", "no", "no", "no", "no", "[6]", "", "dev-qemu", "dev-fio"),
    ("hugetlbfs at /dev/hugepages", "yes", "yes", "no", "no", "no", "[1]",
     "hugetlbfs-qemu-dir", "hugetlbfs-fio-dir"),
    ("memfd as /proc/self/fd/N", "no", "no", "yes", "no", "no", "[2]",
     "memfd-qemu", "memfd-fio"),
    ("THP, /dev/zero MAP_PRIVATE", "[3]", "no", "no", "no", "no", "[3]",
     "thp-qemu-private", "thp-fio-private"),
    ("THP, /dev/zero MAP_SHARED", "yes", "no", "no", "no", "no", "[4]",
     "thp-qemu-shared-always", "thp-fio-shared-always"),
    ("the program's own option", "no", "no", "no", "no", "yes", "[5]", "own-qemu", "own-fio"),
]
ROW = "%-30s%-5s%-6s%-5s%-5s%-7s%-9s%-8s%s"


def bundle(out):
    """QEMU, its TCG module, fio and every library ldd names for them, as a
    tar to unpack at / in the guest; None and why when one is missing."""
    for f in (QEMU, QEMU_TCG, FIO):
        if not os.path.exists(f):
            return None, ("%s is missing: run 'make deps' (apt-get install qemu-system-x86 "
                          "fio)" % f)
    r = subprocess.run(["ldd", QEMU, QEMU_TCG, FIO], capture_output=True, text=True)
    libs = sorted(set(re.findall(r"\s(/\S+) \(0x", r.stdout)))
    tar = os.path.join(out, "pathcase.tar")
    r = subprocess.run(["tar", "-chf", tar, "-P", QEMU, QEMU_TCG, FIO] + libs,
                       capture_output=True, text=True)
    return (tar, "") if r.returncode == 0 else (None, "tar: " + r.stderr[-300:])


def build_helpers(t, out):
    progs = []
    for name in ("asuser", "hugememfd"):
        exe = os.path.join(out, name)
        r = subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", exe,
                            os.path.join(HERE, name + ".c")], capture_output=True, text=True)
        if not t.record("build %s (static)" % name, r.returncode == 0, r.stderr[-300:]):
            return None
        progs.append(exe)
    return progs


def boot(args, adds):
    argv = [os.path.join(ROOT, "run-qemu.sh"), "--kernel", args.kernel, "--initrd",
            args.initrd, "--timeout", str(args.timeout), "--hugepages", "64",
            "--console-log", os.path.join(OUT, "console.log")]
    for a in adds:
        argv += ["--add", a]
    argv += ["--", "sh", "/add/job.sh", args.device, str(args.wait)]
    start = time.time()
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True,
                       timeout=args.timeout + 120)
    with open(os.path.join(OUT, "guest.out"), "w") as f:
        f.write(r.stdout + "\n---- stderr ----\n" + r.stderr)
    return r, time.time() - start


def parse(text):
    rows, facts = {}, {"root": []}
    for line in text.splitlines():
        m = re.match(r"^@@row (\S+) (\S+) (\d+) (\d+) (\d+) (\d+) \| ?(.*)$", line)
        if m:
            rows[m.group(1)] = (m.group(2),) + tuple(int(x) for x in m.group(3, 4, 5, 6)) + (
                m.group(7),)
        elif line.startswith("@@root "):
            facts["root"].append(line[7:])
        elif line.startswith("@@took "):
            facts.setdefault("took", []).append(line[7:])
        elif line.startswith("@@"):
            key, _, rest = line[2:].partition(" ")
            facts[key] = (facts[key] + " " + rest) if key in facts else rest
    return rows, facts


def check(t, rows, facts):
    for name, (want, ok) in EXPECT.items():
        kb = QEMU_KB if "qemu" in name else FIO_KB
        if name not in rows:
            t.record("%s: %s" % (name, want), False, "no row: the job did not get that far")
            continue
        state, rss, h, a, m, err = rows[name]
        t.record("%s: %s" % (name, want), ok(state, h, a, m, kb),
                 "%s, Rss %d kB, Hugetlb %d kB, AnonHugePages %d kB, ShmemPmdMapped %d kB%s"
                 % (state, rss, h, a, m, "; " + err if err else ""))
    t.record("the clients ran as uid 1000, not root",
             re.match(r"uid=1000\(\w+\) gid=1000\(\w+\)( groups=1000\(\w+\))?$",
                      facts.get("as", "").strip()) is not None, facts.get("as", ""))
    t.record("/dev/hugepages as systemd mounts it: root, 0755",
             facts.get("mount", "").strip() == "root 755", facts.get("mount", ""))
    t.record("QEMU's mem-path=DIR file is unlinked while QEMU runs (0 files)",
             facts.get("during", "").split()[-1:] == ["0"], facts.get("during", ""))
    m = re.match(r"free (\d+) of (\d+)$", facts.get("pool", "").strip())
    t.record("the pool is full again after the last client",
             m is not None and m.group(1) == m.group(2), facts.get("pool", ""))
    t.record("fio left the node in place (it unlinks only a file it created)",
             facts.get("node-after-fio", "").startswith("c"), facts.get("node-after-fio", ""))
    t.record("fio unlinked the file it created on hugetlbfs",
             facts.get("files-left-by-fio", "").strip() == "0", facts.get("files-left-by-fio", ""))


def cell(rows, name):
    """What one run got: hugetlb or THP for all of the buffer, 4kB pages,
    part of it huge, or fails (the program exited)."""
    r = rows.get(name)
    if r is None:
        return "not run"
    state, _, h, a, m, _ = r
    kb = QEMU_KB if "qemu" in name else FIO_KB
    if state == "exited":
        return "fails"
    if state != "mapped":
        return state
    if h == kb:
        return "hugetlb"
    if max(a, m) == kb:
        return "THP"
    return "part" if h or a or m else "4kB"


def table(rows):
    lines = [(ROW % ("", "needs", "", "", "", "", "as uid 1000", "", "")).rstrip(),
             ROW % ("way", "root", "mount", "wrap", "code", "option", "QEMU", "fio", "")]
    for way, root, mount, wrap, code, option, note, q, f in TABLE:
        lines.append((ROW % (way, root, mount, wrap, code, option, cell(rows, q),
                             cell(rows, f), note)).rstrip())
    return "\n".join(l.rstrip() for l in lines)


def details(rows, facts):
    """What the notes of the table rest on, from this run."""
    def err(name):
        """The reason a refused run gave, short: QEMU's message, fio's
        function and errno."""
        text = (rows.get(name) or ("",) * 6)[5]
        m = re.search(r"func=([^,]+), error=([^)]+)", text)
        return "%s: %s" % m.groups() if m else re.sub(r"^\S+: ", "", text)[:80] or "?"
    return "\n".join([
        "as uid 1000 on /dev/hugepages: QEMU %s; fio %s" % (
            err("hugetlbfs-qemu-user"), err("hugetlbfs-fio-user")),
        "root had to: " + "; ".join(facts["root"][:4]),
        "without the wrapper: QEMU %s; fio %s" % (
            err("memfd-qemu-nowrap"), err("memfd-fio-nowrap")),
        "fio on /dev/zero, private: " + err("thp-fio-private"),
        "THP settings: " + facts.get("thp", "?"),
        "guest time per run: " + ", ".join(facts.get("took", [])),
        "guest uptime: " + facts.get("uptime", "?")])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default=GUEST_FILES["x86_64"][0])
    ap.add_argument("--initrd", default=GUEST_FILES["x86_64"][1])
    ap.add_argument("--device", default="/dev/hugetlb",
                    help="the node to test; /dev/zero shows the device rows fail")
    ap.add_argument("--timeout", type=int, default=900, help="for the whole boot")
    ap.add_argument("--wait", type=int, default=90,
                    help="seconds each program may take to populate its mapping")
    args = ap.parse_args()
    t = Tally()
    os.makedirs(OUT, exist_ok=True)
    tar, why = bundle(OUT)
    if tar is None:
        t.record("path clients in the guest", True, why, skip=True)
        return t.summary("pathcase: ")
    helpers = build_helpers(t, OUT)
    if helpers is None:
        return t.summary("pathcase: ")
    r, took = boot(args, helpers + [tar, os.path.join(HERE, "job.sh")])
    rows, facts = parse(r.stdout)
    check(t, rows, facts)
    t.record("guest job exits 0", r.returncode == 0, "exit %d %s%s" % (
        r.returncode, QEMU_EXIT_REASON.get(r.returncode, ""), r.stderr[-500:] if r.returncode else ""))
    text = table(rows)
    with open(os.path.join(OUT, "table.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    print(details(rows, facts))
    print("pathcase: one boot, %.0f s wall time (TCG, this host's load); output in %s"
          % (took, os.path.join(OUT, "guest.out")), flush=True)
    return t.summary("pathcase: ")


if __name__ == "__main__":
    sys.exit(main())
