#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel series as a git tree, and back (kernel/README.md).

    kernel/series.py tree [--force]   make series-tree [FORCE=1]
    kernel/series.py export           make series-export

tree: build/series/, a git repository of the extracted tarball (commit
tagged "pristine"), then the cover letter as an empty commit, then one
commit per patch of kernel/patches (git am), on branch "series".

export: the commits after the cover letter back into kernel/patches with
git format-patch (cover letter from the empty commit; its shortlog and
diffstat are format-patch's), then the delta revisions re-applied onto
the result: kernel/test-only and kernel/test-only/mutants on top of the
series, kernel/rfc as its series file lists it.  A delta that no longer
applies stops the export before any file is written, naming the revision,
the patch and the hunk.  Exporting an unchanged tree rewrites every file
byte for byte: hashes are zeroed, the abbreviation is fixed, there is no
git version trailer, and the user's git configuration is left out.
"""
import argparse
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "kernel")
TREE = os.path.join(ROOT, "build", "series")
BASE_TAG = "pristine"
BRANCH = "series"
# What the tree looked like when it last matched kernel/patches (made or
# exported): a later HEAD holds commits no export has written yet.
SYNCED = os.path.join(TREE, ".git", "series-synced")
FORMAT = ["format-patch", "--zero-commit", "--no-signature", "--abbrev=9",
          "--no-thread", "--no-base"]
# Delta revisions applied on top of the series (kernel/rfc has its own
# series file instead).
ON_TOP = (("test-only", "test-only"), ("mutants", "test-only/mutants"))
HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@.*$", re.M)


class SeriesError(Exception):
    pass


def git(*args, cwd=TREE, env=None, check=True, stdin=None):
    """git with the user's and the system's configuration left out, so
    that nothing but the options here decides what format-patch writes."""
    e = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
             GIT_TERMINAL_PROMPT="0")
    e.update(env or {})
    r = subprocess.run(["git"] + list(args), cwd=cwd, env=e, input=stdin,
                       capture_output=True, text=True)
    if check and r.returncode:
        raise SeriesError("git %s failed:\n%s" % (" ".join(args[:2]),
                                                  (r.stdout + r.stderr).strip()))
    return r


def ident(name, email, date):
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": date}


def pristine():
    """The tarball extracted once, where kernel/build.sh keeps it
    (build/src/linux-<id>, same id, lock and .extracted marker), so that
    the two share one extract."""
    tarball = os.environ.get("KERNEL_TARBALL", "/usr/src/linux-source-6.12.tar.xz")
    if not os.path.isfile(tarball):
        raise SeriesError("no kernel source at %s: run 'make deps' (Debian package "
                          "linux-source-6.12)" % tarball)
    st = os.stat(tarball)
    tid = hashlib.sha256(b"%d %d\n" % (st.st_size, int(st.st_mtime))).hexdigest()[:12]
    path = os.path.join(ROOT, "build", "src", "linux-" + tid)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    subprocess.run(["flock", path + ".lock", "sh", "-c",
                    'test -f "$1/.extracted" || { rm -rf "$1" && mkdir -p "$1" && '
                    'echo "series: extracting $2" && tar -xf "$2" -C "$1" '
                    '--strip-components=1 && touch "$1/.extracted"; }', "sh", path, tarball],
                   check=True)
    return path, tarball


def headers(text):
    """{name: value} of a mail's headers (folded lines joined) and its body."""
    head, _, body = text.partition("\n\n")
    out = {}
    for line in head.split("\n")[1:]:
        if line[:1] in (" ", "\t") and out:
            key = list(out)[-1]
            out[key] += line
        elif ":" in line:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out, body


def read_cover(path):
    """(name, email, date, message, prefix) of kernel/patches/0000-*: the
    message is the subject without its [PATCH 0/N] and the text up to the
    shortlog (an "Author (N):" line), which format-patch writes anew; the
    prefix is what that bracket says before 0/N ("RFC PATCH v3")."""
    with open(path) as f:
        hdr, body = headers(f.read())
    m = re.match(r"(.*?)\s*<(.+)>$", hdr.get("From", ""))
    if not m or "Date" not in hdr or "Subject" not in hdr:
        raise SeriesError("%s: no From:, Date: or Subject: header" % path)
    bracket = re.match(r"^\[([^\]]*?PATCH[^\]]*?)\s*(?:\d+/\d+)?\]\s*",
                       hdr["Subject"])
    if not bracket:
        raise SeriesError("%s: the subject has no [PATCH 0/N] bracket" % path)
    subject = hdr["Subject"][bracket.end():]
    short = re.search(r"\n\n[^\n]+ \(\d+\):\n  ", "\n" + body)
    if not short:
        raise SeriesError("%s: no shortlog ('Name (N):') after the text" % path)
    text = ("\n" + body)[:short.start()].strip("\n")
    return (m.group(1), m.group(2), hdr["Date"], "%s\n\n%s\n" % (subject, text),
            bracket.group(1))


def series_patches(folder):
    return sorted(p for p in glob.glob(os.path.join(folder, "0*.patch"))
                  if not os.path.basename(p).startswith("0000-"))


def in_progress():
    """A git am or rebase stopped half way in the tree, or None."""
    for d in ("rebase-apply", "rebase-merge"):
        if os.path.exists(os.path.join(TREE, ".git", d)):
            return d
    return None


def check_clean(fix):
    """Refuses a tree with uncommitted work, naming fix."""
    state = in_progress()
    if state:
        raise SeriesError("build/series: a git %s is in progress (.git/%s): finish "
                          "or abort it, then %s" % (state.split("-")[0], state, fix))
    dirty = git("status", "--porcelain").stdout.splitlines()
    if dirty:
        raise SeriesError("build/series has uncommitted work (%d paths, e.g. %s): "
                          "commit it, then %s" % (len(dirty), dirty[0][3:], fix))


def check_exported():
    """Refuses a tree whose HEAD moved since it last matched kernel/patches."""
    if not os.path.exists(SYNCED):
        raise SeriesError("build/series was never finished or exported (no "
                          ".git/series-synced): FORCE=1 to make it anew")
    synced = read(SYNCED).strip()
    head = git("rev-parse", "HEAD").stdout.strip()
    if synced != head:
        raise SeriesError("build/series has commits not written to kernel/patches (HEAD "
                          "%s, last tree or export at %s): make series-export first, or "
                          "FORCE=1 to discard them" % (head[:12], synced[:12]))


def make_tree(force):
    if os.path.lexists(TREE):
        if not os.path.isdir(os.path.join(TREE, ".git")):
            raise SeriesError("build/series exists but is no series tree: remove it")
        if not force:
            check_clean("make series-export (or FORCE=1 to discard it)")
            check_exported()
        shutil.rmtree(TREE)
    src, tarball = pristine()
    print("series: copying the pristine tree into build/series", flush=True)
    subprocess.run(["cp", "-a", src, TREE], check=True)
    os.unlink(os.path.join(TREE, ".extracted"))
    git("init", "-q", "-b", BRANCH)
    # -f: the tarball's own files, even those its .gitignore files match.
    print("series: committing it (a few minutes for a whole kernel)", flush=True)
    git("-c", "core.looseCompression=1", "add", "-A", "-f")
    date = "@%d +0000" % int(os.stat(tarball).st_mtime)
    git("commit", "-q", "--no-verify", "-m", "%s, as extracted" % os.path.basename(tarball),
        env=ident("linux-source", "linux-source@localhost", date))
    git("tag", BASE_TAG)
    covers = glob.glob(os.path.join(KERNEL, "patches", "0000-*.patch"))
    if len(covers) != 1:
        raise SeriesError("kernel/patches needs one 0000-*.patch cover letter, has %d"
                          % len(covers))
    name, email, cdate, message, prefix = read_cover(covers[0])
    # format-patch's --subject-prefix from the tree's config: the series'
    # version goes back out as it came in (set another for the next one)
    git("config", "format.subjectPrefix", prefix)
    who = ident(name, email, cdate)
    tree = git("rev-parse", "HEAD^{tree}").stdout.strip()
    cover = git("commit-tree", tree, "-p", "HEAD", stdin=message, env=who).stdout.strip()
    git("update-ref", "refs/heads/" + BRANCH, cover)
    for p in series_patches(os.path.join(KERNEL, "patches")):
        r = git("am", "-q", "--keep-non-patch", "--committer-date-is-author-date", p,
                env={"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}, check=False)
        if r.returncode:
            git("am", "--abort", check=False)
            raise SeriesError("kernel/patches/%s does not apply with git am:\n%s"
                              % (os.path.basename(p), (r.stdout + r.stderr).strip()))
    mark_synced()
    n = len(series_patches(os.path.join(KERNEL, "patches")))
    print("series: build/series holds pristine + cover letter + %d commits on branch "
          "'%s'; edit and commit there, then make series-export" % (n, BRANCH))


def mark_synced():
    with open(SYNCED, "w") as f:
        f.write(git("rev-parse", "HEAD").stdout)


def format_series(out):
    """{name: text} of the series' patches and cover letter, from the
    commits after the cover letter commit."""
    commits = git("rev-list", "--reverse", BASE_TAG + "..HEAD").stdout.split()
    if not commits or git("diff-tree", "--quiet", commits[0] + "^", commits[0],
                          check=False).returncode:
        raise SeriesError("build/series: the first commit after '%s' must be the cover "
                          "letter, an empty commit (git commit --allow-empty)" % BASE_TAG)
    branch = git("symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    if not branch:
        raise SeriesError("build/series: HEAD is detached: check out branch '%s'" % BRANCH)
    name, email, date, message = git("log", "-1", "--format=%an%x00%ae%x00%aD%x00%B",
                                     commits[0]).stdout.split("\x00")
    message = message.rstrip("\n") + "\n"
    # The cover letter's From: and Date: are the committer's of the moment:
    # the cover letter commit's author instead.
    fmt = ["-c", "branch.%s.description=%s" % (branch, message), *FORMAT, "-q",
           "--cover-letter", "--cover-from-description=subject", commits[0] + "..HEAD"]
    first = out + ".nocc"
    git(*fmt, "-o", first, env=ident(name, email, date))
    to, cc = recipients([os.path.join(first, f) for f in sorted(os.listdir(first))
                         if not f.startswith("0000-")])
    git(*fmt, "-o", out, *["--to=" + a for a in to], *["--cc=" + a for a in cc],
        env=ident(name, email, date))
    return {"patches/" + f: read(os.path.join(out, f)) for f in sorted(os.listdir(out))}


# Sections of MAINTAINERS whose lists and maintainers every version is sent
# to besides what get_maintainer.pl finds: the nodes are userspace ABI
# (Documentation/process/adding-syscalls.rst Cc's linux-api) and have a
# man page in section 4.
ALSO_CC = ("ABI/API", "MAN-PAGES:")


def recipients(patches):
    """(to, cc) for every mail of the series: the maintainers and reviewers
    scripts/get_maintainer.pl of the tree finds for the patches, and the
    lists it finds with those of ALSO_CC from the tree's MAINTAINERS, each
    once, in the order found."""
    # --no-tree: the tree's MAINTAINERS is read all the same; the check that
    # the whole kernel is there is skipped (tests/host/test_series.py keeps
    # only the files the series touches)
    gm = ["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
          "--no-rolestats", "--no-tree"]
    found = []
    for who in (["--m", "--r", "--no-l"], ["--no-m", "--no-r", "--l"]):
        r = subprocess.run(gm + who + patches, cwd=TREE, capture_output=True, text=True)
        if r.returncode:
            raise SeriesError("get_maintainer.pl failed:\n" + (r.stdout + r.stderr).strip())
        found.append(r.stdout.splitlines())
    section = None
    for line in read(os.path.join(TREE, "MAINTAINERS")).splitlines():
        if line and not line[:2] in ("M:", "L:", "R:") and ":\t" not in line[:3]:
            section = line if line.startswith(ALSO_CC) else None
        elif section and line[:2] in ("M:", "R:"):
            found[0].append(line[2:].strip())
        elif section and line[:2] == "L:":
            found[1].append(line[2:].strip().split()[0])
    return tuple(list(dict.fromkeys(a for a in f if a)) for f in found)


def read(path):
    with open(path) as f:
        return f.read()


def failed_hunk(patch, output):
    """The hunk git apply names in output ("patch failed: FILE:LINE"), as
    its header line and file."""
    m = re.search(r"patch failed: (.+):(\d+)$", output, re.M)
    if not m:
        return "(git apply named no hunk)"
    text = read(patch)
    section = text.find("\n+++ b/%s\n" % m.group(1))
    for h in HUNK.finditer(text, max(section, 0)):
        if h.group(1) == m.group(2):
            return "%s: %s" % (m.group(1), h.group(0))
    return "%s, line %s" % (m.group(1), m.group(2))


def replay(rev, parent, patch, index, name):
    """Commits patch (a mail; kernel/name) on parent through the scratch
    index; the new commit, or SeriesError naming the revision, patch and
    hunk."""
    env = {"GIT_INDEX_FILE": index}
    git("read-tree", parent, env=env)
    r = git("apply", "--cached", "-v", patch, env=env, check=False)
    if r.returncode:
        out = (r.stdout + r.stderr).strip()
        raise SeriesError("revision %s: %s no longer applies to the new series: hunk %s\n%s\n"
                          "(edit it, or rebase it in build/series and copy its format-patch "
                          "output there)" % (rev, "kernel/" + name,
                                             failed_hunk(patch, out), out))
    with tempfile.TemporaryDirectory() as d:
        info = git("mailinfo", "-b", os.path.join(d, "msg"), os.path.join(d, "diff"),
                   stdin=read(patch)).stdout
        body = read(os.path.join(d, "msg"))
    hdr = dict(line.split(": ", 1) for line in info.splitlines() if ": " in line)
    message = hdr["Subject"] + ("\n\n" + body if body.strip() else "\n")
    tree = git("write-tree", env=env).stdout.strip()
    return git("commit-tree", tree, "-p", parent, stdin=message,
               env=ident(hdr["Author"], hdr["Email"], hdr["Date"])).stdout.strip()


def delta_entries(rev, folder, new):
    """[(kernel-relative name, file to apply, own)] of a delta revision:
    kernel/<rev>/series when it has one (an entry under patches/ is the
    series' patch of that subject, in its new version), else folder's
    patches in order, all its own."""
    series = os.path.join(KERNEL, folder, "series")
    if not os.path.exists(series):
        return [(os.path.relpath(p, KERNEL), p, True)
                for p in sorted(glob.glob(os.path.join(KERNEL, folder, "*.patch")))]
    out = []
    for line in read(series).splitlines():
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        if not name.startswith("patches/"):
            out.append((name, os.path.join(KERNEL, name), True))
            continue
        # by subject, not number: a patch added before it renumbers it
        slug = os.path.basename(name)[5:]
        match = [n for n in new if n.startswith("patches/") and n[13:] == slug]
        if not match:
            raise SeriesError("revision %s: kernel/%s/series names %s, and the new series "
                              "has no patch with that subject" % (rev, folder, name))
        out.append((match[0], None, False))
    return out


def rebase_deltas(new, tmp):
    """{kernel-relative name: text} of every delta revision re-applied on
    the new series (new: the series' {name: text})."""
    written = {}
    index = os.path.join(tmp, "index")
    revisions = [("rfc", "rfc", BASE_TAG)] + [(r, f, "HEAD") for r, f in ON_TOP]
    for rev, folder, base in revisions:
        parent = git("rev-parse", base).stdout.strip()
        entries = delta_entries(rev, folder, new)
        for name, path, own in entries:
            if not own:
                path = os.path.join(tmp, "shared-" + os.path.basename(name))
                with open(path, "w") as f:
                    f.write(new[name])
            parent = replay(rev, parent, path, index, name)
            if own:
                # deltas are not the series: no RFC or version in their subject
                written[name] = git(*FORMAT, "--subject-prefix=PATCH", "--stdout", "-1",
                                    parent).stdout
        series = os.path.join(KERNEL, folder, "series")
        if os.path.exists(series):
            text = read(series)
            for name, _, own in entries:
                if not own:
                    slug = re.escape(os.path.basename(name)[5:])
                    text = re.sub(r"^patches/\d{4}-%s$" % slug, name, text, flags=re.M)
            written[os.path.join(folder, "series")] = text
    return written


def export():
    if not os.path.isdir(os.path.join(TREE, ".git")):
        raise SeriesError("no build/series: make series-tree first")
    check_clean("make series-export")
    with tempfile.TemporaryDirectory(dir=os.path.dirname(TREE)) as tmp:
        new = format_series(os.path.join(tmp, "patches"))
        files = dict(new, **rebase_deltas(new, tmp))
    changed, removed = [], []
    for old in glob.glob(os.path.join(KERNEL, "patches", "*.patch")):
        if "patches/" + os.path.basename(old) not in files:
            os.unlink(old)
            removed.append("patches/%s (removed)" % os.path.basename(old))
    for name, text in sorted(files.items()):
        path = os.path.join(KERNEL, name)
        if not os.path.exists(path) or read(path) != text:
            with open(path, "w") as f:
                f.write(text)
            changed.append(name)
    mark_synced()
    for name in removed + changed:
        print("series: wrote kernel/" + name)
    print("series: exported %d patches and the cover letter; %d files changed, %d unchanged, "
          "%d removed" % (len(new) - 1, len(changed), len(files) - len(changed), len(removed)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=("tree", "export"))
    ap.add_argument("--force", action="store_true",
                    help="tree: discard build/series even with uncommitted or unexported work")
    args = ap.parse_args()
    try:
        if args.command == "tree":
            make_tree(args.force)
        else:
            export()
    except SeriesError as e:
        print("series-%s: %s" % (args.command, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
