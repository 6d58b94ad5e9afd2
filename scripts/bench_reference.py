"""Python side of scripts/bench.sh.

  python bench_reference.py alpha            time krippendorff.alpha (ordinal) per questionnaire
                                             on the VTON-sized workload (2,139 x 50 items x 4 raters)
  python bench_reference.py gen FILE         write a long CSV of ~440,000 ratings
                                             (62,688 units, 13,838 coders, ~7 ratings per unit)
  python bench_reference.py long FILE        the pandas + krippendorff equivalent of
                                             `atelier stats alpha --level ordinal --format long FILE`
"""
import sys
import time

import numpy as np


def bench_alpha():
    import krippendorff

    rng = np.random.default_rng(42)
    work = []
    for _ in range(2139):
        truth = rng.integers(1, 4, size=50)
        noise = rng.integers(1, 4, size=(4, 50))
        keep = rng.random((4, 50)) < 0.7
        work.append(np.where(keep, truth, noise).astype(float))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        total = 0.0
        for m in work:
            total += krippendorff.alpha(reliability_data=m, level_of_measurement="ordinal")
            m.mean(axis=0)
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"mean alpha {total / len(work):.4f}")
    print(f"BENCH_SECONDS={times[len(times) // 2]}")


def gen(path):
    rng = np.random.default_rng(7)
    units, coders = 62688, 13838
    per_unit = 7
    with open(path, "w") as f:
        f.write("unit,coder,value\n")
        n = 0
        for u in range(units):
            truth = rng.integers(1, 4)
            k = per_unit + (1 if rng.random() < 0.02 else 0)
            for c in rng.choice(coders, size=k, replace=False):
                v = truth if rng.random() < 0.6 else rng.integers(1, 4)
                f.write(f"u{u},w{c},{v}\n")
                n += 1
    print(f"{n} ratings written to {path}")


def long(path):
    import krippendorff
    import pandas as pd

    df = pd.read_csv(path)
    counts = df.groupby(["unit", "value"]).size().unstack(fill_value=0)
    a = krippendorff.alpha(value_counts=counts.to_numpy(), value_domain=list(counts.columns), level_of_measurement="ordinal")
    print(a)


if __name__ == "__main__":
    {"alpha": lambda: bench_alpha(), "gen": lambda: gen(sys.argv[2]), "long": lambda: long(sys.argv[2])}[sys.argv[1]]()
