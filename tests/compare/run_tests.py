#!/usr/bin/env python3
"""Unit tests of compare/compare.py: statistics, verdicts, metadata refusal.

Runs without a kernel or a guest.  Ends with "N passed, N failed"; exit
status 1 if any failed."""
import io
import math
import os
import random
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "compare"))
import compare as C  # noqa: E402

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


@test
def median_and_delta():
    assert C.median([3, 1, 2]) == 2
    assert C.median([4, 1, 2, 3]) == 2.5
    assert close(C.delta_pct([100, 100], [110, 110]), 10.0)
    assert close(C.delta_pct([10], [9]), -10.0)
    assert C.rel_spread([5, 5, 5]) == 0.0


@test
def mwu_exact_separated():
    # scipy.stats.mannwhitneyu([1..5], [6..10], method="exact") -> p 0.00794
    u, p, how = C.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert how == "exact", how
    assert u == 0
    assert close(p, 2.0 / 252, 1e-12), p
    u, p2, _ = C.mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
    assert u == 25 and close(p, p2)


@test
def mwu_exact_known_value():
    # U = 2 (6 > 4, 6 > 5) for n1 = n2 = 4: P(U <= 2) = 4/70, two-sided 8/70
    u, p, how = C.mann_whitney([1, 2, 3, 6], [4, 5, 7, 8])
    assert how == "exact"
    assert u == 2, u
    counts = C._u_exact_counts(4, 4)
    assert sum(counts) == 70
    assert counts[:3] == [1, 1, 2], counts
    assert close(p, 8.0 / 70), p


@test
def mwu_counts_sum_to_binomial():
    for n1, n2 in ((1, 1), (2, 3), (5, 5), (7, 4)):
        assert sum(C._u_exact_counts(n1, n2)) == math.comb(n1 + n2, n1)


@test
def mwu_ties_and_no_spread():
    u, p, how = C.mann_whitney([5, 5, 5], [5, 5, 5])
    assert p == 1.0 and how == "no spread"
    u, p, how = C.mann_whitney([1, 1, 2, 2, 3], [3, 4, 4, 5, 5])
    assert how == "normal"
    assert 0 < p < 0.05, p


@test
def mwu_same_distribution_not_significant():
    rng = random.Random(7)
    a = [rng.gauss(100, 5) for _ in range(8)]
    b = [rng.gauss(100, 5) for _ in range(8)]
    _, p, _ = C.mann_whitney(a, b)
    assert p > 0.05, p


@test
def bootstrap_ci_covers_and_is_seeded():
    a = [100, 101, 99, 100.5, 99.5]
    b = [110, 111, 109, 110.5, 109.5]
    lo, hi = C.bootstrap_ci(a, b)
    assert lo <= 10.0 <= hi, (lo, hi)
    assert lo > 0
    assert (lo, hi) == C.bootstrap_ci(a, b)
    lo, hi = C.bootstrap_ci([7, 7], [7, 7])
    assert lo == hi == 0


@test
def verdict_aa_noisy_is_no_change():
    rng = random.Random(3)
    for trial in range(20):
        a = [rng.gauss(100, 8) for _ in range(5)]
        b = [rng.gauss(100, 8) for _ in range(5)]
        r = C.verdict(a, b, threshold=5.0, seed=trial)
        assert r["verdict"] != "REGRESSION" or r["worse_pct"] > 5, r


@test
def verdict_regression_and_improvement():
    a = [100, 102, 98, 101, 99]
    b = [120, 122, 118, 121, 119]
    r = C.verdict(a, b, threshold=5.0)
    assert r["verdict"] == "REGRESSION", r
    r = C.verdict(b, a, threshold=5.0)
    assert r["verdict"] == "improvement", r
    # higher is better (bandwidth): B higher is an improvement
    r = C.verdict(a, b, threshold=5.0, lower_is_better=False)
    assert r["verdict"] == "improvement", r


@test
def verdict_below_threshold_is_no_change():
    a = [100, 100.1, 99.9, 100.05, 99.95]
    b = [103, 103.1, 102.9, 103.05, 102.95]
    r = C.verdict(a, b, threshold=5.0)
    assert r["verdict"] == "no change", r
    assert r["p"] < 0.05  # significant, but small


@test
def verdict_too_few_reps_is_not_significant():
    # 2 vs 2: the smallest two-sided exact p is 1/3: never significant
    r = C.verdict([100, 101], [150, 151], threshold=5.0)
    assert r["verdict"] == "no change", r


@test
def verdict_deterministic_exact():
    r = C.verdict([1000.0], [1060.0], threshold=5.0, deterministic=True)
    assert r["test"] == "icount" and r["verdict"] == "REGRESSION", r
    r = C.verdict([1000.0], [1040.0], threshold=5.0, deterministic=True)
    assert r["verdict"] == "no change", r
    r = C.verdict([1000.0, 1000.1], [900.0, 900.05], threshold=5.0,
                  deterministic=True)
    assert r["verdict"] == "improvement", r


@test
def verdict_deterministic_spread_falls_back_to_test():
    # icount claimed but the repetitions spread 20 %: statistics decide,
    # and 2 vs 2 cannot be significant.
    r = C.verdict([1000, 1200], [1300, 1500], threshold=5.0,
                  deterministic=True)
    assert r["test"] != "icount" and r["verdict"] == "no change", r


def meta(**kw):
    m = {"run_id": "r", "mode": "guest", "profile": "tiny",
         "host_cpu": "Cpu X", "timing_source": "icount", "status": "complete",
         "qemu": {"accel": "tcg", "icount": True, "version": "7.2"}}
    q = kw.pop("qemu", {})
    m["qemu"] = dict(m["qemu"], **q)
    m.update(kw)
    return m


@test
def meta_same_is_clean():
    ref, warn = C.check_meta([meta(), meta()], [meta()])
    assert ref == [] and warn == [], (ref, warn)


@test
def meta_refusals():
    for kw in ({"qemu": {"accel": "kvm"}}, {"qemu": {"icount": False}},
               {"timing_source": "tcg"}, {"profile": "quick"},
               {"mode": "native"}, {"status": "failed"}):
        ref, _ = C.check_meta([meta()], [meta(**kw)])
        assert ref, kw


@test
def meta_host_cpu():
    # instruction counts: a loud warning; timed: a refusal
    ref, warn = C.check_meta([meta()], [meta(host_cpu="Cpu Y")])
    assert not ref and any("host_cpu" in w for w in warn), (ref, warn)
    t = {"timing_source": "tcg", "qemu": {"icount": False}}
    ref, _ = C.check_meta([meta(**t)], [meta(host_cpu="Cpu Y", **t)])
    assert any("host_cpu" in r for r in ref), ref


def fault_rows(vals):
    """vals: {(backing, mode): us_per_mb}"""
    return {"fault": [{"backing": b, "mode": m, "size_bytes": "4194304",
                       "us_per_mb": str(v)} for (b, m), v in vals.items()]}


@test
def compare_runs_exit_status():
    base = {("devhugetlb", "setup"): 10.0, ("devhugetlb", "demand"): 50.0,
            ("devhugetlb", "populate"): 40.0}
    same = [(meta(), fault_rows(base))]
    out = io.StringIO()
    st, res = C.compare_runs(same, same, 3.0, out=out)
    assert st == C.EXIT_OK and len(res) == 3, out.getvalue()
    assert all(r["verdict"] == "no change" for r in res)
    slow = dict(base)
    slow[("devhugetlb", "setup")] = 12.0
    st, res = C.compare_runs(same, [(meta(), fault_rows(slow))], 3.0, out=out)
    assert st == C.EXIT_REGRESSION, out.getvalue()
    # populate is not gated by check-regression
    pop = dict(base)
    pop[("devhugetlb", "populate")] = 80.0
    st, _ = C.compare_runs(same, [(meta(), fault_rows(pop))], 3.0,
                           gate_modes=("demand", "setup"), out=out)
    assert st == C.EXIT_OK, out.getvalue()


@test
def compare_runs_refuses_mismatch():
    rows = fault_rows({("devhugetlb", "setup"): 10.0})
    out = io.StringIO()
    st, res = C.compare_runs([(meta(), rows)],
                             [(meta(qemu={"icount": False},
                                    timing_source="tcg"), rows)], 3.0,
                             out=out)
    assert st == C.EXIT_MISMATCH and res == [], out.getvalue()
    assert "MISMATCH" in out.getvalue()
    out = io.StringIO()
    st, res = C.compare_runs([(meta(), rows)],
                             [(meta(qemu={"accel": "kvm"}), rows)], 3.0,
                             allow_mismatch=True, out=out)
    assert st == C.EXIT_OK and res, out.getvalue()
    assert "NOT comparable" in out.getvalue()


@test
def load_run_reads_csv_and_meta():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write('{"status": "complete"}')
        with open(os.path.join(d, "fault.csv"), "w") as f:
            f.write("backing,page_kb,mode,us_per_mb,faults_per_mb,size_bytes\n"
                    "devhugetlb,2048,setup,12.5,0,4194304\n")
        m, rows = C.load_run(d)
        pts = C.collect([(m, rows)])
        assert pts == {("fault", "devhugetlb", "setup", "4194304"): [12.5]}, pts


@test
def series_dirs():
    with tempfile.TemporaryDirectory() as w:
        names = lambda d: sorted(os.listdir(d))  # noqa: E731
        cur = names(C.series_dir("current", w))
        slow = names(C.series_dir("slow", w))
        rfc = names(C.series_dir("rfc", w))
        assert cur == sorted(os.listdir(os.path.join(ROOT, "kernel",
                                                     "patches")))
        assert slow[:len(cur)] == cur and len(slow) > len(cur)
        assert slow[-1].startswith("9000-test-only-"), slow
        assert rfc and rfc != cur
        head = names(C.series_dir("HEAD", w))
        assert any(n.endswith(".patch") for n in head), head
        try:
            C.series_dir("no-such-rev-xyz", w)
        except SystemExit:
            pass
        else:
            raise AssertionError("bad revision accepted")


def main():
    passed = failed = 0
    for t in TESTS:
        try:
            t()
        except Exception:
            failed += 1
            print("FAIL %s" % t.__name__)
            traceback.print_exc()
        else:
            passed += 1
            print("ok   %s" % t.__name__)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
