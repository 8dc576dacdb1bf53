# SPDX-License-Identifier: GPL-2.0
"""The rows' protocol: the binaries' stdout lines ("@header", "@row",
"@meta", "@error", "@done"; bench/runner.h) into results/<run-id>/ (a CSV
per benchmark, meta.json), as a local run and lava/fetch.py read them."""

import datetime
import json
import os
import subprocess
import sys

from bench import contract

from .base import bracketed


class Results:
    """One run folder: CSVs written row by row, meta.json kept current."""

    STATUS_ORDER = {"failed": 2, "measured": 1, "skipped": 0}

    def __init__(self, results_dir, run_id, meta):
        self.results_dir = results_dir
        self.dir = os.path.join(results_dir, run_id)
        os.makedirs(self.dir, exist_ok=True)      # new_run_id made it
        self.meta = dict(meta)
        self.meta.setdefault("backings", {})
        self.meta.setdefault("counters", {})
        self.meta.setdefault("hugepages", {})
        self.meta.setdefault("method", {})
        self.meta.setdefault("errors", [])
        self.meta.setdefault("bench_exit", {})
        self.headers = {}
        self.rows = {}
        self.env = {}
        self.write_meta()
        self.point_latest()

    def point_latest(self):
        link = os.path.join(self.results_dir, "latest")
        tmp = link + ".tmp%d" % os.getpid()
        os.symlink(os.path.basename(self.dir), tmp)
        os.replace(tmp, link)

    def write_meta(self):
        path = os.path.join(self.dir, "meta.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.meta, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(path + ".tmp", path)

    def csv_path(self, bench):
        return os.path.join(self.dir, bench + ".csv")

    def handle(self, line):
        """Consumes one line of a benchmark's stdout; returns the text to
        echo (None for nothing)."""
        line = line.rstrip("\r\n")
        if not line.startswith("@"):
            return line


        tag, _, rest = line.partition(" ")
        if tag == "@header":
            bench, _, header = rest.partition(" ")
            self.header(bench, header)
            return None
        if tag == "@row":
            bench, _, row = rest.partition(" ")
            return self.row(bench, row)
        if tag == "@meta":
            key, _, js = rest.partition(" ")
            try:
                self.add_meta(key, json.loads(js))
            except ValueError:
                return "bench: unreadable metadata: " + line
            return None
        if tag == "@error":
            self.meta["errors"].append(rest)
            self.write_meta()
            return "ERROR " + rest
        if tag in ("@done", "@exit"):   # @exit: the guest script's view
            bench, _, rc = rest.partition(" ")
            self.exit_status(bench, int(rc) if rc.isdigit() else rc)
            return None
        return line

    def exit_status(self, bench, rc):
        """A benchmark runs in more than one invocation: keep the worst."""
        ex = self.meta["bench_exit"]
        if ex.get(bench) in (None, 0):
            ex[bench] = rc
        self.write_meta()

    def header(self, bench, header):
        cols = header.split(",")
        if bench in self.headers:
            if self.headers[bench] != cols:
                raise ValueError("%s: header changed" % bench)
            return
        # Written whole and renamed into place, and only then recorded: an
        # interrupt between open() and write() must not leave an empty CSV.
        path = self.csv_path(bench)
        with open(path + ".tmp", "w") as f:
            f.write(header + "\n")
        os.replace(path + ".tmp", path)
        self.headers[bench] = cols
        self.rows.setdefault(bench, 0)

    def row(self, bench, row):
        cols = self.headers.get(bench)
        if cols is None:
            return "bench: row before header: " + row
        if len(row.split(",")) != len(cols):
            self.meta["errors"].append("%s: malformed row: %s" % (bench, row))
            return "bench: malformed row (%d fields, want %d): %s" % (
                len(row.split(",")), len(cols), row)
        with open(self.csv_path(bench), "a") as f:
            f.write(row + "\n")
            f.flush()
        self.rows[bench] += 1
        return None

    def add_meta(self, key, val):
        """One "@meta KEY JSON" line into meta.json: by its key's handler
        (META_KEYS), else kept as it came under "other"."""
        handler = self.META_KEYS.get(key)
        if handler:
            handler(self, val)
        else:
            self.meta.setdefault("other", {})[key] = val
        self.write_meta()

    def _meta_backing(self, val):
        b = self.meta["backings"].setdefault(val["name"], {
            "status": val["status"], "reason": val["reason"],
            "page_kb": val["page_kb"], "promised_kb": val["promised_kb"],
            "benches": {}})
        b["benches"][val["bench"]] = val["status"]
        # failed anywhere > measured anywhere > skipped everywhere
        if self.STATUS_ORDER[val["status"]] > self.STATUS_ORDER[b["status"]]:
            b["status"] = val["status"]
            b["reason"] = val["reason"]
        if val["page_kb"]:
            b["page_kb"] = val["page_kb"]

    def _meta_method(self, val):
        m = self.meta
        bench = val.pop("bench", "?")
        m["method"].setdefault("per_bench", {})[bench] = val
        for k in ("warmup", "reps", "seed", "aslr_off", "cpu_pinned",
                  "timer_resolution_ns", "timer_getres_ns", "clock"):
            m["method"].setdefault(k, val.get(k))
        # the first benchmark that models the TLB (--model) adds its
        # sample to the run's choice (cli.py; its preset where none)
        t = m.setdefault("tlb_model", {"preset": val.get("model")}) \
            if "model" in val else {"counted_accesses": None}
        if "counted_accesses" not in t:
            t.update(counted_accesses=val.get("model_cap"),
                     warm_accesses=val.get("model_cap"))

    def _meta_hugepages(self, val):
        if not self.meta["hugepages"]:
            self.meta["hugepages"] = {"%skB" % k: v for k, v in val.items()}

    def _meta_counters(self, val):
        if not self.meta["counters"]:
            self.meta["counters"] = val

    def _meta_order(self, val):
        # the rounds each point was measured in (bench/runner.c)
        bench = val.pop("bench", "?")
        self.meta.setdefault("repetition_order", {}).setdefault(
            bench, []).append(val)

    def _meta_numa(self, val):
        # where each mapping's pages are, per node (bench/numa.h)
        bench = val.pop("bench", "?")
        self.meta.setdefault("numa_placement", {}).setdefault(
            bench, {}).setdefault(val.pop("backing"), []).append(val)

    def _meta_thp_guest(self, val):
        # the guest kernel's THP knobs (the host's are in machine)
        self.meta["thp_guest"] = {k: bracketed(v) or None
                                  for k, v in val.items()}

    def _meta_skip(self, val):
        # a point a benchmark could not measure (faultscale: N regions
        # do not fit the pool), with the reason
        self.meta.setdefault("skipped_points", []).append(val)

    def _meta_host_memory(self, val):
        # what backs guest RAM on the host (run-qemu.sh under KVM)
        self.meta["host_memory"] = val

    def _meta_env(self, val):
        m = self.meta
        self.env = val
        m["kernel"] = val.get("kernel")
        m["measured_cpu"] = val.get("cpu")
        if m.get("mode") == "guest":
            m["series_id"] = val.get("series_id")
            if m.get("qemu") is not None:
                accel = val.get("accel") or m["qemu"].get("accel")
                icount = val.get("icount") == "1"
                m["qemu"]["accel"] = accel
                m["qemu"]["icount"] = icount
                m["timing_source"] = "icount" if icount else accel

    # The @meta keys the binaries print (bench/rows.h, results/README.md)
    # and where each goes in meta.json; any other key is kept under "other".
    META_KEYS = {"backing": _meta_backing, "method": _meta_method,
                 "hugepages": _meta_hugepages, "counters": _meta_counters,
                 "order": _meta_order, "numa": _meta_numa,
                 "thp_guest": _meta_thp_guest, "skip": _meta_skip,
                 "host_memory": _meta_host_memory, "env": _meta_env}

    # QEMU emulates a PMU under TCG on arm64 (PMUv3): its cycles follow
    # emulated time, and a guest kernel with a PMU driver opens them.
    EMULATED_PMU = ("%s counted by the PMU QEMU emulates (timing source "
                    "%s): emulated, not hardware counts")

    def finish(self, status):
        src = self.meta.get("timing_source")
        counted = [e for e in ("cycles", "instructions")
                   if (self.meta["counters"].get(e) or {}).get("available")]
        if counted and src and not contract.timing_is_hardware(src):
            note = self.EMULATED_PMU % (" and ".join(counted), src)
            if note not in self.meta.setdefault("notes", []):
                self.meta["notes"].append(note)
        self.meta["status"] = status
        self.meta["rows"] = dict(self.rows)
        self.write_meta()


def stream_lines(cmd, res, cwd=None):
    """Runs cmd, feeding each stdout line to res; returns the exit code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, cwd=cwd, text=True,
                            errors="replace", bufsize=1)
    try:
        for line in proc.stdout:
            out = res.handle(line)
            if out is not None:
                print(out, flush=True)
        return proc.wait()
    except BaseException:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise


def new_run_id(results_dir, mode, prof):
    """A new run's id; its folder is made here, by mkdir, so that two runs
    started in the same second cannot both take it."""
    base = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + \
        "-%s-%s" % (mode, prof)
    os.makedirs(results_dir, exist_ok=True)
    rid, i = base, 1
    while True:
        try:
            os.mkdir(os.path.join(results_dir, rid))
            return rid
        except FileExistsError:
            i += 1
            rid = "%s-%d" % (base, i)


def check_exits(res, benches, rc):
    """Every benchmark must have reported a status, and each status be 0."""
    exits = [v for v in res.meta["bench_exit"].values() if v != 0]
    missing = [b for b in benches if b not in res.meta["bench_exit"]]
    if missing:
        res.meta["errors"].append("no exit status from: " +
                                  ", ".join(missing))
    return rc or (2 if exits or missing else 0)


def report(res, status):
    bad = [n for n, b in res.meta["backings"].items()
           if b["status"] == "failed"]
    if bad:
        print("bench: FAILED backings: %s" % ", ".join(bad), file=sys.stderr)
    print("bench: rows %s; results in %s (%s)" % (
        json.dumps(res.rows, sort_keys=True), res.dir, status))
    print("bench: figures and summary: python3 -m plots.render %s" % res.dir)
