"""Reference values for libs/evaluation/statistics (agreement, judge validity, corrected rate).

Computed independently of the TypeScript: each agreement statistic from its definition over raw
pairs of labels (Krippendorff's alpha by pairwise disagreements, not the coincidence matrix;
Cohen's kappa from every pair of the two raters' labels), and Spearman's rho, Wilson intervals and
McNemar's exact test by SciPy. The data are drawn from NumPy's seeded generator, so a run prints
the same JSON every time:

    python3 test/statistics/review-statistics-reference.py > test/statistics/review-statistics-reference.json

test/statistics/review-statistics-reference.spec.ts compares the TypeScript with that file, and
re-runs this script to check the file is its output when NumPy and SciPy are installed.
"""

import itertools
import json
import math
import sys
from collections import Counter

import numpy as np
from scipy import stats

SEED = 20240611


def rated_units(ratings):
    """The labels of each item that has at least two."""
    units = [[v for v in row if v is not None] for row in ratings]
    return [u for u in units if len(u) >= 2]


def percent_agreement(ratings):
    units = rated_units(ratings)
    if not units:
        return None
    shares = [sum(a == b for a, b in itertools.combinations(u, 2)) / math.comb(len(u), 2) for u in units]
    return sum(shares) / len(shares)


def fleiss_kappa(ratings):
    """Fleiss' kappa, items with varying numbers of labels as Gwet (2014) generalises it."""
    labelled = [[v for v in row if v is not None] for row in ratings]
    labelled = [u for u in labelled if u]
    paired = [u for u in labelled if len(u) >= 2]
    if len(paired) < 2:
        return None
    categories = sorted({v for u in labelled for v in u})
    if len(categories) < 2:
        return None
    observed = np.mean([sum(c * (c - 1) for c in Counter(u).values()) / (len(u) * (len(u) - 1)) for u in paired])
    shares = [np.mean([Counter(u)[k] / len(u) for u in labelled]) for k in categories]
    chance = sum(s * s for s in shares)
    return float((observed - chance) / (1 - chance))


def delta2(a, b, level, counts, categories):
    if a == b:
        return 0.0
    if level == "nominal":
        return 1.0
    if level == "interval":
        return float(a - b) ** 2
    if level == "ratio":
        return ((a - b) / (a + b)) ** 2
    low, high = min(a, b), max(a, b)
    between = sum(counts[g] for g in categories if low <= g <= high)
    return (between - (counts[a] + counts[b]) / 2) ** 2


def krippendorff_alpha(ratings, level):
    """1 - D_o / D_e by the pairwise definition: D_o averages the distances of the pairs within items
    (each item's pairs weighted 1 / (m - 1)), D_e those of every pair of pairable labels."""
    units = rated_units(ratings)
    if len(units) < 2:
        return None
    values = [v for u in units for v in u]
    n = len(values)
    counts = Counter(values)
    categories = sorted(counts)
    within = sum(
        sum(delta2(a, b, level, counts, categories) for a, b in itertools.permutations(u, 2)) / (len(u) - 1)
        for u in units
    )
    # Every ordered pair of pairable labels (a label with itself adds 0), by NumPy over a table of the distances.
    table = np.array([[delta2(a, b, level, counts, categories) for b in categories] for a in categories])
    index = np.array([categories.index(v) for v in values])
    between = float(table[index[:, None], index[None, :]].sum())
    if between == 0:
        return None
    return 1 - (within / n) / (between / (n * (n - 1)))


def cohens_kappa(a, b, weights):
    """1 - mean disagreement of the items' pairs / mean disagreement of every pair (a_i, b_j)."""
    categories = sorted({v for v in list(a) + list(b) if v is not None})
    position = {v: i for i, v in enumerate(categories)}
    span = max(1, len(categories) - 1)

    def w(x, y):
        d = abs(position[x] - position[y]) / span
        return {"none": float(x != y), "linear": d, "quadratic": d * d}[weights]

    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if len(pairs) < 2:
        return None
    observed = sum(w(x, y) for x, y in pairs) / len(pairs)
    expected = sum(w(x, y) for x, _ in pairs for _, y in pairs) / len(pairs) ** 2
    if expected == 0:
        return None
    return 1 - observed / expected


def rater_agreement(ratings):
    raters = max(len(row) for row in ratings)
    result = []
    for r in range(raters):
        equal = others = agree = counted = 0
        for row in ratings:
            own = row[r]
            if own is None:
                continue
            rest = [v for k, v in enumerate(row) if k != r and v is not None]
            equal += sum(v == own for v in rest)
            others += len(rest)
            top = Counter(rest).most_common()
            if top and (len(top) == 1 or top[0][1] > top[1][1]):
                counted += 1
                agree += top[0][0] == own
        result.append(
            {"with_others": equal / others if others else None, "with_majority": agree / counted if counted else None}
        )
    return result


def agreement_case(rng, items, raters, categories, missing, skill):
    truth = rng.integers(1, categories + 1, size=items)
    ratings = []
    for t in truth:
        row = []
        for _ in range(raters):
            if rng.random() < missing:
                row.append(None)
            elif rng.random() < skill:
                row.append(int(t))
            else:
                row.append(int(rng.integers(1, categories + 1)))
        ratings.append(row)
    a = [row[0] for row in ratings]
    b = [row[1] for row in ratings]
    return {
        "ratings": ratings,
        "percent_agreement": percent_agreement(ratings),
        "fleiss_kappa": fleiss_kappa(ratings),
        "alpha": {level: krippendorff_alpha(ratings, level) for level in ("nominal", "ordinal", "interval", "ratio")},
        "cohen": {weights: cohens_kappa(a, b, weights) for weights in ("none", "linear", "quadratic")},
        "raters": rater_agreement(ratings),
    }


def wilson(successes, trials):
    if trials == 0:
        return None
    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    return [float(ci.low), float(ci.high)]


def validity_case(rng, items, prevalence, sensitivity, specificity, missing):
    human = [bool(rng.random() < prevalence) for _ in range(items)]
    judge = [bool(rng.random() < (sensitivity if h else 1 - specificity)) for h in human]
    other = [bool(rng.random() < (0.8 if h else 0.3)) for h in human]
    judge = [None if rng.random() < missing else j for j in judge]
    both = [(j, h) for j, h in zip(judge, human) if j is not None]
    tp = sum(j and h for j, h in both)
    fn = sum((not j) and h for j, h in both)
    tn = sum((not j) and (not h) for j, h in both)
    fp = sum(j and (not h) for j, h in both)
    label = lambda v: None if v is None else ("pass" if v else "fail")
    only_a = sum(j == h and o != h for j, o, h in zip(judge, other, human) if j is not None)
    only_b = sum(o == h and j != h for j, o, h in zip(judge, other, human) if j is not None)
    discordant = only_a + only_b
    human_score = [int(rng.integers(1, 6)) for _ in range(items)]
    judge_score = [None if rng.random() < missing else int(np.clip(h + rng.integers(-1, 2), 1, 5)) for h in human_score]
    scored = [(j, h) for j, h in zip(judge_score, human_score) if j is not None]
    rho = stats.spearmanr([j for j, _ in scored], [h for _, h in scored]).statistic if len(scored) >= 2 else math.nan
    return {
        "judge": judge,
        "human": human,
        "other": other,
        "judge_score": judge_score,
        "human_score": human_score,
        "confusion": [tp, fp, tn, fn],
        "sensitivity": wilson(tp, tp + fn),
        "specificity": wilson(tn, tn + fp),
        "accuracy": wilson(tp + tn, len(both)),
        "kappa": cohens_kappa([label(j) for j in judge], [label(h) for h in human], "none"),
        "mcnemar_p": float(stats.binomtest(min(only_a, only_b), discordant, 0.5).pvalue) if discordant else 1.0,
        "spearman": None if math.isnan(rho) else float(rho),
        "mean_absolute_error": float(np.mean([abs(j - h) for j, h in scored])) if scored else None,
    }


def corrected_case(passed, total, se, n_se, sp, n_sp):
    """Rogan-Gladen and the Lang & Reiczigel (2014) interval, written from the paper's equations."""
    z = stats.norm.ppf(0.975)
    observed, sens, spec = passed / total, se / n_se, sp / n_sp
    value = (observed + spec - 1) / (sens + spec - 1)
    se_, sp_ = (se + 1) / (n_se + 2), (sp + 1) / (n_sp + 2)
    n_, ap_ = total + z * z, (passed + z * z / 2) / (total + z * z)
    p_ = (ap_ + sp_ - 1) / (se_ + sp_ - 1)
    shift = 2 * z * z * (p_ * se_ * (1 - se_) / (n_se + 2) - (1 - p_) * sp_ * (1 - sp_) / (n_sp + 2))
    var = (ap_ * (1 - ap_) / n_ + p_**2 * se_ * (1 - se_) / (n_se + 2) + (1 - p_) ** 2 * sp_ * (1 - sp_) / (n_sp + 2)) / (
        se_ + sp_ - 1
    ) ** 2
    low, high = p_ + shift - z * math.sqrt(var), p_ + shift + z * math.sqrt(var)
    return {
        "input": [passed, total, se, n_se, sp, n_sp],
        "unclipped": value,
        "interval": [min(1.0, max(0.0, low)), min(1.0, max(0.0, high))],
    }


def main():
    rng = np.random.default_rng(SEED)
    agreement = []
    for items, raters, categories, missing, skill in itertools.product(
        (2, 6, 25, 50), (2, 3, 5), (2, 3, 5), (0.0, 0.3), (0.0, 0.7)
    ):
        agreement.append(agreement_case(rng, items, raters, categories, missing, skill))
    validity = [
        validity_case(rng, items, prevalence, 0.85, 0.75, missing)
        for items, prevalence, missing in itertools.product((3, 15, 60, 250), (0.2, 0.6), (0.0, 0.25))
    ]
    corrected = [
        corrected_case(*args)
        for args in [
            (300, 1000, 85, 100, 90, 100),
            (12, 40, 18, 20, 17, 20),
            (5, 200, 40, 50, 45, 50),
            (190, 200, 40, 50, 45, 50),
            (77, 150, 30, 31, 60, 64),
        ]
    ]
    json.dump({"seed": SEED, "agreement": agreement, "validity": validity, "corrected": corrected}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
