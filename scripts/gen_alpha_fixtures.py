"""Regenerates tests/fixtures/alpha_random.json: random reliability matrices
with missing values and the alpha the PyPI package `krippendorff` gives them.

Run from the repository root:  python scripts/gen_alpha_fixtures.py
(needs `pip install krippendorff numpy`). The committed tests only read the
JSON, so they pass without Python or network.
"""
import json
import random

import krippendorff
import numpy as np

rng = random.Random(20261125)
cases = []
for i in range(40):
    coders = rng.randint(2, 7)
    units = rng.randint(3, 40)
    scale = rng.choice([[1, 2, 3], [0, 1], [1, 2, 3, 4, 5], [0.5, 1.5, 4.0, 10.0], list(range(1, 11))])
    missing = rng.choice([0.0, 0.1, 0.3, 0.5])
    matrix = [[None if rng.random() < missing else rng.choice(scale) for _ in range(units)] for _ in range(coders)]
    data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    expected = {}
    for level in ["nominal", "ordinal", "interval", "ratio"]:
        try:
            a = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
            expected[level] = None if a is None or np.isnan(a) else float(a)
        except Exception:
            expected[level] = None
    # Stored units x coders, as our wide CSV format.
    cases.append({"units": [[matrix[c][u] for c in range(coders)] for u in range(units)], "expected": expected})

with open("tests/fixtures/alpha_random.json", "w") as f:
    json.dump({"generator": "scripts/gen_alpha_fixtures.py", "package": "krippendorff (PyPI)", "cases": cases}, f)
print(len(cases), "cases")
