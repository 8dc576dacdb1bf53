# SPDX-License-Identifier: GPL-2.0
"""The statistics of a comparison: medians, the change between two sides,
its bootstrap confidence interval, the Mann-Whitney U test and the verdict
on one benchmark point (compare.compare's table, lava.fleet's report).
Standard library only."""
import math
import random


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of nothing")
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2.0


def rel_spread(xs):
    """(max - min) / median: 0 for deterministic repetitions."""
    m = median(xs)
    if m == 0:
        return 0.0 if max(xs) == min(xs) else math.inf
    return (max(xs) - min(xs)) / abs(m)


def delta_pct(a, b):
    """Change of B's median against A's, in percent of A's."""
    ma, mb = median(a), median(b)
    if ma == 0:
        return 0.0 if mb == 0 else math.copysign(math.inf, mb)
    return (mb - ma) / abs(ma) * 100.0


def bootstrap_ci(a, b, iters=2000, level=0.95, seed=1):
    """Percentile bootstrap CI of delta_pct(a, b): resample each side
    with replacement.  Seeded, so the same data give the same interval."""
    rng = random.Random(seed)
    ds = []
    for _ in range(iters):
        ra = [a[rng.randrange(len(a))] for _ in a]
        rb = [b[rng.randrange(len(b))] for _ in b]
        ds.append(delta_pct(ra, rb))
    ds.sort()
    lo = ds[int(math.floor((1 - level) / 2 * (iters - 1)))]
    hi = ds[int(math.ceil((1 + level) / 2 * (iters - 1)))]
    return lo, hi


def _ranks(values):
    """Average ranks (1-based) with ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        r = (i + j) / 2.0 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = r
        i = j + 1
    return ranks


def _u_exact_counts(n1, n2):
    """counts[u] = number of arrangements with U = u (no ties)."""
    # f(i, j) distribution of U for i elements of sample 1, j of sample 2:
    # f(i, j)[u] = f(i-1, j)[u - j] + f(i, j-1)[u]
    prev = [[1] for _ in range(n2 + 1)]  # i = 0: U = 0 only
    for i in range(1, n1 + 1):
        cur = [[1]]  # j = 0: U = 0 only
        for j in range(1, n2 + 1):
            a = prev[j]
            b = cur[j - 1]
            size = i * j + 1
            c = [0] * size
            for u, v in enumerate(a):
                if u + j < size:
                    c[u + j] += v
            for u, v in enumerate(b):
                c[u] += v
            cur.append(c)
        prev = cur
    return prev[n2]


def mann_whitney(a, b):
    """Two-sided Mann-Whitney U test.  Returns (U of a, p-value, method).

    Exact distribution when there are no ties and the samples are small,
    otherwise the normal approximation with tie correction and continuity
    correction.  Samples with no spread at all (every value equal) give
    p = 1: there is nothing to rank."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("empty sample")
    allv = list(a) + list(b)
    ranks = _ranks(allv)
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2.0
    ties = len(set(allv)) < len(allv)
    if len(set(allv)) == 1:
        return u1, 1.0, "no spread"
    if not ties and n1 * n2 <= 400:
        counts = _u_exact_counts(n1, n2)
        total = float(sum(counts))
        u = int(round(min(u1, n1 * n2 - u1)))
        p = 2.0 * sum(counts[:u + 1]) / total
        return u1, min(1.0, p), "exact"
    mu = n1 * n2 / 2.0
    n = n1 + n2
    tie_term = 0.0
    for v in set(allv):
        t = allv.count(v)
        tie_term += t ** 3 - t
    var = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return u1, 1.0, "no spread"
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    p = math.erfc(max(z, 0.0) / math.sqrt(2.0))
    return u1, min(1.0, p), "normal"


def min_p(n1, n2):
    """The smallest two-sided p the Mann-Whitney U test can give for n1 and
    n2 repetitions: both samples wholly apart, 2 of C(n1 + n2, n1) orders
    (ties only raise it)."""
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


def runs_needed(alpha):
    """The fewest runs a side at which min_p falls below alpha."""
    n = 1
    while min_p(n, n) >= alpha:
        n += 1
    return n


def verdict(a, b, threshold, lower_is_better=True, alpha=0.05,
            deterministic=False, det_tol=0.5, seed=1):
    """Judge one benchmark point.

    a, b: the repetitions (one value per boot) of A and B.  threshold:
    percent.  A regression is B worse than A by more than the threshold.

    deterministic (icount): when both sides' repetitions agree within
    det_tol percent, the numbers are instruction counts, so the delta is
    judged exactly against the threshold, no test needed.  Otherwise (or
    when the repetitions spread more than det_tol) a regression or
    improvement also needs the Mann-Whitney p below alpha and the whole
    bootstrap CI beyond zero in the same direction; where too few
    repetitions make any p at least alpha (min_p), the verdict is "cannot
    tell", whatever the medians say, and "needs" is the runs a side the
    test needs (runs_needed)."""
    d = delta_pct(a, b)
    worse = d if lower_is_better else -d
    u, p, how = mann_whitney(a, b)
    lo, hi = bootstrap_ci(a, b, seed=seed)
    spread = max(rel_spread(a), rel_spread(b)) * 100.0
    exact = deterministic and spread <= det_tol
    if exact:
        sig_worse = sig_better = True
        test = "icount"
    else:
        # CI of the delta entirely on one side of zero
        ci_worse = (lo > 0) if lower_is_better else (hi < 0)
        ci_better = (hi < 0) if lower_is_better else (lo > 0)
        sig_worse = p < alpha and ci_worse
        sig_better = p < alpha and ci_better
        test = how
    if not exact and min_p(len(a), len(b)) >= alpha:
        v = "cannot tell"
    elif worse > threshold and sig_worse:
        v = "REGRESSION"
    elif worse < -threshold and sig_better:
        v = "improvement"
    else:
        v = "no change"
    return {
        "median_a": median(a), "median_b": median(b), "delta_pct": d,
        "worse_pct": worse, "ci_lo": lo, "ci_hi": hi, "u": u, "p": p,
        "test": test, "spread_pct": spread, "n_a": len(a), "n_b": len(b),
        "verdict": v, "needs": runs_needed(alpha),
    }
