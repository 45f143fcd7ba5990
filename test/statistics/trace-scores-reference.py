"""Reference values for GET /traces/scores:aggregate (src/modules/traces/scores/).

A seeded set of 30 traces over three days (each with a start time, a service, a model and 0 to 2
tags) and one score record each of an evaluator's metric (a score in [0, 1], passed when at least
0.5, or an error with neither), then the aggregates of the window 2026-11-01 .. 2026-11-04 by
bucket (none, day, hour) and group (none, service, model, tag: a trace of two tags counts in
both, one of none in the null group). For each bucket: n, scored, errored, passed, failed, the
pass rate with Wilson's 95% interval (SciPy's binomtest(...).proportion_ci(method='wilson')), the
mean score with Student's t 95% interval (scipy.stats.t.interval) and the sample SD (NumPy,
ddof=1). Written from those definitions, not from the service's code:

    python3 test/statistics/trace-scores-reference.py > test/statistics/trace-scores-reference.json
    npx prettier --write test/statistics/trace-scores-reference.json

test/statistics/trace-scores-reference.spec.ts checks the intervals against the library's and,
where NumPy and SciPy are installed, runs this script again and checks it still prints the kept
file; test/e2e/traces/scores.e2e-spec.ts records these scores and checks the service's answers.
"""

import json
import math
import random
from datetime import datetime, timedelta, timezone

import numpy as np
from scipy import stats

rng = random.Random(20261101)
START = datetime(2026, 11, 1, tzinfo=timezone.utc)
END = START + timedelta(days=3)
SERVICES = ["checkout-bot", "support-bot"]
MODELS = ["gpt-4o-mini", "claude-haiku"]
TAGS = ["vip", "beta"]


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


traces = []
scores = []
for i in range(30):
    started = START + timedelta(minutes=rng.randrange(0, 3 * 24 * 60))
    trace_id = "5c0e%028x" % (i + 1)
    tags = sorted(t for t in TAGS if rng.random() < 0.4)
    traces.append(
        {
            "trace_id": trace_id,
            "start_time": iso(started),
            "service": rng.choice(SERVICES),
            "model": rng.choice(MODELS),
            "tags": tags,
        }
    )
    if rng.random() < 0.1:
        scores.append({"trace_id": trace_id, "score": None, "passed": None, "label": None, "error": "judge timed out"})
    else:
        score = round(rng.betavariate(3, 2), 3)
        scores.append(
            {
                "trace_id": trace_id,
                "score": score,
                "passed": score >= 0.5,
                "label": "helpful" if score >= 0.5 else "unhelpful",
                "error": None,
            }
        )

by_trace = {t["trace_id"]: t for t in traces}


def bucket_of(started, bucket):
    if bucket == "none":
        return START, END
    size = timedelta(hours=1) if bucket == "hour" else timedelta(days=1)
    begin = datetime(started.year, started.month, started.day, started.hour if bucket == "hour" else 0, tzinfo=timezone.utc)
    return begin, begin + size


def groups_of(trace, group_by):
    if group_by is None:
        return [None]
    if group_by == "service":
        return [trace["service"]]
    if group_by == "model":
        return [trace["model"]]
    return trace["tags"] or [None]


def summary(records):
    values = np.array([r["score"] for r in records if r["score"] is not None], dtype=float)
    passed = sum(1 for r in records if r["passed"] is True)
    failed = sum(1 for r in records if r["passed"] is False)
    out = {
        "n": len(records),
        "scored": int(values.size),
        "errored": sum(1 for r in records if r["error"] is not None),
        "passed": passed,
        "failed": failed,
        "pass_rate": None,
        "pass_rate_interval": None,
        "mean": None,
        "mean_interval": None,
        "sd": None,
    }
    if passed + failed:
        ci = stats.binomtest(passed, passed + failed).proportion_ci(confidence_level=0.95, method="wilson")
        out["pass_rate"] = passed / (passed + failed)
        out["pass_rate_interval"] = {"low": float(ci.low), "high": float(ci.high)}
    if values.size:
        out["mean"] = float(values.mean())
    if values.size >= 2:
        sd = float(values.std(ddof=1))
        low, high = stats.t.interval(0.95, values.size - 1, loc=values.mean(), scale=sd / math.sqrt(values.size))
        out["sd"] = sd
        out["mean_interval"] = {"low": float(low), "high": float(high)}
    return out


aggregates = []
for bucket, group_by in [("none", None), ("day", None), ("day", "service"), ("none", "model"), ("none", "tag"), ("hour", None)]:
    cells = {}
    for s in scores:
        trace = by_trace[s["trace_id"]]
        started = datetime.strptime(trace["start_time"], "%Y-%m-%dT%H:%M:%S.000Z").replace(tzinfo=timezone.utc)
        for group in groups_of(trace, group_by):
            cells.setdefault((bucket_of(started, bucket), group), []).append(s)
    ordered = sorted(cells.items(), key=lambda kv: (kv[0][0][0], kv[0][1] is None, kv[0][1] or ""))
    aggregates.append(
        {
            "bucket": bucket,
            "group_by": group_by,
            "buckets": [
                {"start": iso(begin), "end": iso(end), "group": group, **summary(records)}
                for ((begin, end), group), records in ordered
            ],
        }
    )

print(
    json.dumps(
        {"from": iso(START), "to": iso(END), "traces": traces, "scores": scores, "aggregates": aggregates}, indent=1
    )
)
