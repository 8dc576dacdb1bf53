#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Bring a persistent kernel tree to exactly "pristine tree + patch series",
rewriting only the files whose content differs.

    kernel/reconcile.py --pristine DIR --tree DIR [PATCH...]

Unchanged files keep their mtimes, so Kbuild's dependency tracking in an
object folder built from this tree recompiles only what depends on a file
that really changed.  A file rewritten here gets the current time, which is
newer than every object built from its old content.

Which files can differ from the pristine tree: those the series now being
applied touches, those the previous series touched (listed in
TREE/.reconcile/touched), and anything modified in the tree since the last
reconcile (newer than TREE/.reconcile/stamp: a hand edit).  Each of them is
compared with its target: the pristine file with the new series applied
(in a staging folder holding only the touched files), or the pristine file,
or nothing.  Every other file is the pristine one.

Prints one line per file changed; exits 1 naming the patch that does not
apply.
"""
import argparse
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
# What patch(1) prints for each file it writes.
PATCHING = r"^patching (?:file|symbolic link) '?(.+?)'?(?: \((?:renamed|copied) from .*\))?$"


def strip_path(name):
    """'a/mm/mmap.c\t2024-..' -> 'mm/mmap.c' (-p1); None for /dev/null."""
    name = name.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    return name.split("/", 1)[1] if "/" in name else name


def skip_hunks(lines, i):
    """Index of the first line after the hunks that start at lines[i].
    Hunk bodies are counted, so a removed line that reads '-- x' (shown
    as '--- x') is never taken for a file header."""
    while i < len(lines) and lines[i].startswith("@@ "):
        m = HUNK.match(lines[i])
        if not m:
            raise ValueError("malformed hunk header: %r" % lines[i])
        old = int(m.group(1)) if m.group(1) is not None else 1
        new = int(m.group(2)) if m.group(2) is not None else 1
        i += 1
        while (old > 0 or new > 0) and i < len(lines):
            c = lines[i][:1]
            if c in (" ", ""):
                old -= 1
                new -= 1
            elif c == "-":
                old -= 1
            elif c == "+":
                new -= 1
            i += 1
        while i < len(lines) and lines[i].startswith("\\"):
            i += 1
    return i


def touched_paths(text):
    """Every path (relative to the tree) a unified or git diff reads or
    writes, renames and copies included."""
    lines = text.split("\n")
    paths = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "GIT binary patch" in line:
            raise ValueError("binary patches are not supported")
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            for p in (strip_path(line[4:]), strip_path(lines[i + 1][4:])):
                if p:
                    paths.add(p)
            i = skip_hunks(lines, i + 2)
            continue
        m = re.match(r"^(?:rename|copy) (?:from|to) (.+)$", line)
        if m:
            paths.add(m.group(1).strip())
        i += 1
    return paths


def same(a, b):
    """Do two paths hold the same thing (absent, symlink target, or file
    content and permission bits)?"""
    sa = os.lstat(a) if os.path.lexists(a) else None
    sb = os.lstat(b) if os.path.lexists(b) else None
    if sa is None or sb is None:
        return sa is None and sb is None
    if stat.S_ISLNK(sa.st_mode) or stat.S_ISLNK(sb.st_mode):
        return (stat.S_ISLNK(sa.st_mode) and stat.S_ISLNK(sb.st_mode)
                and os.readlink(a) == os.readlink(b))
    if stat.S_IMODE(sa.st_mode) != stat.S_IMODE(sb.st_mode) or sa.st_size != sb.st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def put(src, dst):
    """Make dst what src is (or remove it), with a fresh mtime."""
    if os.path.lexists(dst):
        os.unlink(dst)
    if not os.path.lexists(src):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return
    tmp = dst + ".reconcile-tmp"
    shutil.copyfile(src, tmp)
    os.chmod(tmp, stat.S_IMODE(os.stat(src).st_mode))
    os.rename(tmp, dst)


def stage_series(pristine, stage, patches):
    """Apply the series in stage, which starts with only the pristine
    copies of the files it touches.  Returns the touched paths."""
    touched = set()
    for patch in patches:
        with open(patch, encoding="utf-8", errors="surrogateescape") as f:
            try:
                paths = touched_paths(f.read())
            except ValueError as e:
                sys.exit("kernel/reconcile.py: %s: %s" % (os.path.basename(patch), e))
        for p in paths - touched:
            orig = os.path.join(pristine, p)
            if os.path.lexists(orig) and not os.path.isdir(orig):
                os.makedirs(os.path.dirname(os.path.join(stage, p)), exist_ok=True)
                shutil.copy2(orig, os.path.join(stage, p), follow_symlinks=False)
        touched |= paths
        r = subprocess.run(["patch", "-d", stage, "-p1", "--forward", "--no-backup-if-mismatch",
                            "-r", "-", "-i", os.path.abspath(patch)],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit("kernel/reconcile.py: %s does not apply:\n%s"
                     % (os.path.basename(patch), (r.stdout + r.stderr).strip()))
        # patch names every file it wrote: each must be one we staged.
        for name in re.findall(PATCHING, r.stdout, re.M):
            if name not in touched:
                sys.exit("kernel/reconcile.py: %s changed %s, which its headers do not name"
                         % (os.path.basename(patch), name))
    return touched


def hand_edits(tree, stamp):
    """Files and links changed in the tree since the last reconcile."""
    if not os.path.exists(stamp):
        return set()
    r = subprocess.run(["find", ".", "-path", "./.reconcile", "-prune", "-o",
                        "(", "-type", "f", "-o", "-type", "l", ")", "-newer", stamp, "-print"],
                       cwd=tree, capture_output=True, text=True, check=True)
    return {p[2:] for p in r.stdout.splitlines()}


def prune_dirs(tree, pristine, path):
    """Remove directories emptied by a deletion, up to one that exists in
    the pristine tree."""
    d = os.path.dirname(path)
    while d and not os.path.isdir(os.path.join(pristine, d)):
        full = os.path.join(tree, d)
        if not os.path.isdir(full) or os.listdir(full):
            return
        os.rmdir(full)
        d = os.path.dirname(d)


def reconcile(pristine, tree, patches):
    state = os.path.join(tree, ".reconcile")
    os.makedirs(state, exist_ok=True)
    listing = os.path.join(state, "touched")
    stamp = os.path.join(state, "stamp")
    previous = set()
    if os.path.exists(listing):
        with open(listing) as f:
            previous = set(f.read().split("\n")) - {""}
    edited = hand_edits(tree, stamp)
    changed = []
    with tempfile.TemporaryDirectory(dir=state) as stage:
        touched = stage_series(pristine, stage, patches)
        for p in sorted(touched | previous | edited):
            target = os.path.join(stage if p in touched else pristine, p)
            if not same(target, os.path.join(tree, p)):
                put(target, os.path.join(tree, p))
                if not os.path.lexists(target):
                    prune_dirs(tree, pristine, p)
                changed.append(p)
    with open(listing + ".tmp", "w") as f:
        f.write("".join(p + "\n" for p in sorted(touched)))
    os.rename(listing + ".tmp", listing)
    # Written last: everything above is older than the stamp, so a later
    # hand edit is the only thing hand_edits() can find.
    with open(stamp, "w"):
        pass
    return changed, edited


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pristine", required=True, help="the extracted tarball, never modified")
    ap.add_argument("--tree", required=True, help="the tree to reconcile (a copy of --pristine)")
    ap.add_argument("patches", nargs="*")
    args = ap.parse_args()
    changed, edited = reconcile(args.pristine, args.tree, args.patches)
    for p in changed:
        print("changed: %s%s" % (p, " (a hand edit, reverted)" if p in edited else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
