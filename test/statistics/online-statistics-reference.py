"""Reference values for libs/evaluation/online/drop-alert.ts: one-sided p-values for a drop.

Each table is (x1, n1, x0, n0): x1 passes of n1 in the recent window, x0 of n0 in the reference
window. Printed for each: Fisher's exact test by SciPy (`alternative='less'`: the recent window's
share is lower; `'greater'`: higher) on [[x1, n1 - x1], [x0, n0 - x0]], and the pooled
two-proportion z-test written from its formula, z = (p1 - p0) / sqrt(p (1 - p) (1/n1 + 1/n0))
with p the pooled share, one-sided p = Phi(z) (None when every trial passed or every one failed):

    python3 test/statistics/online-statistics-reference.py

test/statistics/online-statistics-reference.spec.ts keeps the printed numbers and, where NumPy
and SciPy are installed, runs this script again and checks it still prints them.
"""

import json
import math

from scipy import stats

TABLES = [
    (3, 10, 9, 10),
    (0, 5, 5, 5),
    (0, 12, 0, 15),
    (10, 10, 7, 10),
    (1, 20, 4, 20),
    (48, 80, 56, 70),
    (280, 400, 320, 400),
    (310, 400, 320, 400),
    (5, 50, 0, 40),
    (700, 1000, 820, 1000),
]


def z_test(x1, n1, x0, n0):
    pooled = (x0 + x1) / (n0 + n1)
    variance = pooled * (1 - pooled) * (1 / n0 + 1 / n1)
    if variance == 0:
        return None
    z = (x1 / n1 - x0 / n0) / math.sqrt(variance)
    return float(stats.norm.cdf(z))


rows = []
for x1, n1, x0, n0 in TABLES:
    table = [[x1, n1 - x1], [x0, n0 - x0]]
    rows.append(
        {
            "table": [x1, n1, x0, n0],
            "fisher_less": float(stats.fisher_exact(table, alternative="less")[1]),
            "fisher_greater": float(stats.fisher_exact(table, alternative="greater")[1]),
            "z_less": z_test(x1, n1, x0, n0),
        }
    )
print("[\n" + ",\n".join("  " + json.dumps(row) for row in rows) + "\n]")
