"""Regenerates tests/fixtures/metrics_random.json: random retrieval and rating
data with the values scikit-learn and SciPy compute for them.

Run from the repository root:  python scripts/gen_metric_fixtures.py
(needs `pip install scikit-learn scipy numpy`). The committed tests only read
the JSON, so they pass without Python or network.
"""
import json
import random

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import average_precision_score, r2_score, roc_auc_score

rng = random.Random(7)
retrieval = []
for case in range(25):
    pairs = []
    for q in range(rng.randint(2, 8)):
        for c in range(rng.randint(2, 9)):
            # Coarse scores make ties common, the case sklearn's handling matters for.
            pairs.append({"query": f"q{q}", "candidate": f"c{c}", "label": int(rng.random() < 0.35), "score": rng.randint(0, 6) / 6})
    y = np.array([p["label"] for p in pairs])
    s = np.array([p["score"] for p in pairs])
    expected = {
        "roc_auc_micro": float(roc_auc_score(y, s)) if 0 < y.sum() < len(y) else None,
        "pr_auc_micro": float(average_precision_score(y, s)) if y.sum() > 0 else None,
    }
    rocs, aps = [], []
    for q in sorted({p["query"] for p in pairs}):
        yq = np.array([p["label"] for p in pairs if p["query"] == q])
        sq = np.array([p["score"] for p in pairs if p["query"] == q])
        # Both macro averages over the queries with a positive and a negative.
        if 0 < yq.sum() < len(yq):
            rocs.append(roc_auc_score(yq, sq))
            aps.append(average_precision_score(yq, sq))
    expected["roc_auc_macro"] = float(np.mean(rocs)) if rocs else None
    expected["pr_auc_macro"] = float(np.mean(aps)) if aps else None
    retrieval.append({"pairs": pairs, "expected": expected})

rating = []
for case in range(25):
    n = rng.randint(5, 40)
    x = [rng.randint(1, 9) / 3 for _ in range(n)]
    y = [rng.randint(1, 9) / 3 for _ in range(n)]
    rating.append({
        "x": x, "y": y,
        "pearson": float(pearsonr(x, y).statistic),
        "spearman": float(spearmanr(x, y).statistic),
        "r2": float(r2_score(x, y)),
    })

with open("tests/fixtures/metrics_random.json", "w") as f:
    json.dump({"generator": "scripts/gen_metric_fixtures.py", "retrieval": retrieval, "rating": rating}, f)
print(len(retrieval), "retrieval cases,", len(rating), "rating cases")
