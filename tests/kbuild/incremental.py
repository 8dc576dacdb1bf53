#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`make test-kernel-build`: an incremental kernel build is the same as one
from scratch, and revisions built one after another in a slot never mix.

With the series A (kernel/patches), B (A with one string in 0001's C code
changed, and one in kernel/panic.c, which the series does not touch) and C (A with one comment line of 0001 changed), in the slot that
`make kernel` uses for the config:
  1. build A, then B, then C, then A again, each incremental;
  2. build A from scratch in a fresh slot, every object compiled anew
     (--scratch, default plain: without ccache at all, so neither a cached
     object nor ccache's rewriting of paths can make the images agree;
     recache when a fragment turns UBSAN on: compiled anew through ccache,
     because GCC writes UBSAN's source file names as it is given them,
     unmapped by any -f*-prefix-map, and a plain gcc in another slot would
     differ by that path alone; ccache: cached objects allowed, faster);
then check: B recompiled only the objects of its two edited sources (plus
relinking) and its image differs from A's (the edit reached the image);
C's vmlinux equals A's (a comment changes nothing);
the second A equals the first (nothing of B leaked); the scratch A equals
both (.config identical, vmlinux identical under fixed build stamps).
Where two images differ it names the ELF sections that differ and the
strings only one of them holds.  Prints each build's time, then
`N passed, N failed`.
"""
import argparse
import difflib
import filecmp
import glob
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "build", "test-kernel-build")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def edited_series(name, pattern, edit, extra=None):
    """A copy of kernel/patches whose 0001 has the first added line
    matching pattern replaced by edit(line) (same line count), plus an
    extra patch if given."""
    d = os.path.join(WORK, "series-" + name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "kernel", "patches"), d)
    if extra:
        with open(os.path.join(d, "9999-test-only.patch"), "w") as f:
            f.write(extra)
    p = glob.glob(os.path.join(d, "0001-*.patch"))[0]
    with open(p) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if re.match(pattern, line):
            lines[i] = edit(line)
            break
    else:
        sys.exit("test-kernel-build: no line matching %r in %s" % (pattern, p))
    with open(p, "w") as f:
        f.write("\n".join(lines))
    return d


def outside_patch(path):
    """A patch changing the first pr_*() string of a file the series does
    not touch: going back to A must restore it from the pristine tree and
    recompile it."""
    pristine = glob.glob(os.path.join(ROOT, "build", "src", "linux-*", path))
    if not pristine:
        sys.exit("test-kernel-build: no pristine %s: run make kernel first" % path)
    with open(pristine[0]) as f:
        old = f.read().splitlines(keepends=True)
    new = list(old)
    for i, line in enumerate(new):
        if re.search(r'\bpr_\w+\("', line):
            new[i] = line.replace('("', '("x', 1)
            break
    return "".join(difflib.unified_diff(old, new, "a/" + path, "b/" + path))


# How the scratch build compiles: the environment kernel/build.sh gets.
SCRATCH = {"plain": {"CCACHE_DISABLE": "1"}, "recache": {"CCACHE_RECACHE": "1"},
           "ccache": {}}


def ubsan(configs):
    """Does a config fragment turn UBSAN on?"""
    for c in configs:
        with open(c) as f:
            if re.search(r"^CONFIG_UBSAN=y", f.read(), re.M):
                return True
    return False


def build(label, patches, configs, out, slot=None, env=None):
    argv = [os.path.join(ROOT, "kernel", "build.sh"), "--patches", patches, "--out", out]
    for c in configs:
        argv += ["--config", c]
    if slot:
        argv += ["--slot", slot]
    print("== %s" % label, flush=True)
    start = time.time()
    r = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    took = time.time() - start
    sys.stdout.write(r.stdout)
    if r.returncode:
        sys.exit("test-kernel-build: the %s build failed (exit %d)" % (label, r.returncode))
    m = re.search(r"^kernel: compiled (\d+) objects(?:: (.*))?$", r.stdout, re.M)
    print("%s: %.0f s, %s objects compiled" % (label, took, m.group(1) if m else "?"),
          flush=True)
    return {"dir": out, "seconds": took, "compiled": int(m.group(1)) if m else -1,
            "objects": m.group(2).split() if m and m.group(2) else None,
            "vmlinux": sha(os.path.join(out, "vmlinux"))}


# Objects every relink compiles whatever changed: the boot image's, and the
# kallsyms passes of a kernel with KALLSYMS (the debug one).
LINK_STAGE = re.compile(r"^(\.tmp_vmlinux\d*\.kallsyms\.o|arch/x86/boot/)")


def source_objects(objects):
    """The objects of a small rebuild that come from edited sources (the
    list kernel/build.sh prints), or None when it printed no list."""
    if objects is None:
        return None
    return sorted(o for o in objects if not LINK_STAGE.match(o))


def sections(path):
    """{name: bytes} of an ELF64 file's sections that occupy the file."""
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx]
    out = {}
    for name, kind, _, _, off, size in heads:
        end = data.index(b"\0", names[4] + name)
        label = data[names[4] + name:end].decode()
        out[label] = data[off:off + size] if kind != 8 else b""  # 8: SHT_NOBITS
    return out


def explain(a, b):
    """Which sections of two vmlinux files differ, and a few strings of
    .rodata that only one of them holds (a path, a stamp...)."""
    sa, sb = sections(a), sections(b)
    diff = sorted(n for n in set(sa) | set(sb) if sa.get(n) != sb.get(n))
    lines = ["sections that differ: %s" % (", ".join(diff) or "none")]
    words = [set(re.findall(rb"[ -~]{6,}", s.get(".rodata", b""))) for s in (sa, sb)]
    for label, own in (("only in the first", words[0] - words[1]),
                       ("only in the second", words[1] - words[0])):
        if own:
            lines.append("%s: %s" % (label, ", ".join(repr(w.decode()) for w in sorted(own)[:6])))
    return "; ".join(lines)


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail):
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def same_image(t, name, x, y):
    """Check that builds x and y made the same vmlinux; if not, say how they differ."""
    ok = x["vmlinux"] == y["vmlinux"]
    detail = "%s, %s" % (x["vmlinux"], y["vmlinux"])
    if not ok:
        detail += "; " + explain(os.path.join(x["dir"], "vmlinux"), os.path.join(y["dir"], "vmlinux"))
    t.check(name, ok, detail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", action="append", default=[],
                    help="config fragment (default kernel/config/base.config)")
    ap.add_argument("--scratch", choices=sorted(SCRATCH),
                    help="how the scratch build compiles (see above; default plain, "
                    "recache with UBSAN)")
    args = ap.parse_args()
    configs = [os.path.abspath(c) for c in args.config] or \
        [os.path.join(ROOT, "kernel", "config", "base.config")]
    os.makedirs(WORK, exist_ok=True)
    a = os.path.join(ROOT, "kernel", "patches")
    b = edited_series("B", r'^\+[^#+].*pr_\w+\("', lambda l: l.replace('("', '("x', 1),
                      outside_patch("kernel/panic.c"))
    c = edited_series("C", r"^\+ \* \S", lambda l: l + " (edited)")

    a1 = build("A", a, configs, os.path.join(WORK, "A1"))
    bb = build("B (a string in 0001 and one in kernel/panic.c changed)", b, configs, os.path.join(WORK, "B"))
    cc = build("C (a comment in 0001 changed)", c, configs, os.path.join(WORK, "C"))
    a2 = build("A again", a, configs, os.path.join(WORK, "A2"))
    slot = "test-scratch"
    shutil.rmtree(os.path.join(ROOT, "build", "tree", slot), ignore_errors=True)
    mode = args.scratch or ("recache" if ubsan(configs) else "plain")
    print("scratch build: %s" % mode, flush=True)
    env = dict(os.environ, **SCRATCH[mode])
    scratch = build("A from scratch", a, configs, os.path.join(WORK, "A-scratch"), slot, env)
    shutil.rmtree(os.path.join(ROOT, "build", "tree", slot))

    t = Tally()
    t.check("B recompiled only the objects of the two edited sources",
            source_objects(bb["objects"]) == ["kernel/panic.o", "mm/hugetlb_dev.o"],
            "%d objects: %s" % (bb["compiled"], " ".join(bb["objects"] or ["(not listed)"])))
    t.check("B's image differs from A's", bb["vmlinux"] != a1["vmlinux"],
            "A %s, B %s" % (a1["vmlinux"], bb["vmlinux"]))
    same_image(t, "C (comment edit) has A's vmlinux", a1, cc)
    same_image(t, "A after B and C equals the first A", a1, a2)
    t.check("A from scratch has the same .config",
            filecmp.cmp(os.path.join(a1["dir"], "config"),
                        os.path.join(scratch["dir"], "config"), shallow=False), "")
    same_image(t, "A from scratch has the same vmlinux", a1, scratch)
    print("%d passed, %d failed" % (t.passed, t.failed))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
