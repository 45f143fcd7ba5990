"""Expected agreement of the planted labels of test/e2e/review/review-flow.e2e-spec.ts.

The two reviewers' labels of 60 items come from the same linear congruential generator as the
test (written out below); Cohen's kappa and Krippendorff's alpha are computed by the independent
definitions of review-statistics-reference.py (pairs of labels, not the coincidence matrix):

    python3 test/statistics/review-queue-planted.py
"""

import importlib.util
import json
import os

spec = importlib.util.spec_from_file_location(
    "reference", os.path.join(os.path.dirname(__file__), "review-statistics-reference.py")
)
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)


def planted(items=60, seed=20251129):
    state = seed
    def uniform():
        nonlocal state
        state = (1103515245 * state + 12345) % 2**31
        return state / 2**31
    a, b = [], []
    for _ in range(items):
        truth = uniform() < 0.6
        flip = uniform() < 0.15
        base = 1 + int(uniform() * 5)
        nudge = uniform() < 0.25
        a.append({"correct": truth, "score": base})
        b.append({"correct": truth != flip, "score": base + ((1 if base < 5 else -1) if nudge else 0)})
    return a, b


a, b = planted()
pf = lambda labels: ["pass" if l["correct"] else "fail" for l in labels]
sc = lambda labels: [l["score"] for l in labels]
print(json.dumps({
    "disagreements": sum(x["correct"] != y["correct"] for x, y in zip(a, b)),
    "correct": {
        "cohens_kappa": reference.cohens_kappa(pf(a), pf(b), "none"),
        "alpha_nominal": reference.krippendorff_alpha(list(zip(pf(a), pf(b))), "nominal"),
    },
    "score": {
        "cohens_kappa": reference.cohens_kappa(sc(a), sc(b), "none"),
        "alpha_interval": reference.krippendorff_alpha(list(zip(sc(a), sc(b))), "interval"),
        "alpha_ordinal": reference.krippendorff_alpha(list(zip(sc(a), sc(b))), "ordinal"),
    },
}, indent=2))
