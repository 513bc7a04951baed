"""Does the D-study projection predict what happens on new topics?

For each data set (simulated campaigns evaluated with MAP on their depth-100 pools, and the real
TREC-3 ad hoc AP matrix of ../shared/data/gt/adhoc3.csv), the 50 topics are split many times into two
disjoint halves of 25. For every split we observe, over the systems' two half means,
  - the Pearson correlation (relative agreement; G theory predicts it by E rho^2 for 25 topics), and
  - the absolute-agreement intraclass correlation ICC(A,1) of McGraw and Wong (agreement of the
    scores themselves, including the shift between topic sets; predicted by Phi for 25 topics).
The prediction is the D-study from a G-study on all 50 topics, projected to 25 topics, with its 95%
interval. We also check the intervals' calibration: for every split, a G-study on one half only
(25 topics), projected to 25 topics; how often its 95% interval contains the mean observed value over
all splits (the best estimate of the true coefficient).

    python3 benchmarks/phi_prediction.py [--splits 2000] [--seeds 1 2 3]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine  # noqa: E402
from engine.simulation.campaigns import simulate  # noqa: E402
from engine.stability import d_study, g_study, score_matrix  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def icc_a1(a: np.ndarray, b: np.ndarray) -> float:
    """McGraw-Wong ICC(A,1): absolute agreement of two measurements of n subjects."""
    y = np.stack([a, b], axis=1)
    n, k = y.shape
    g = y.mean()
    msr = k * ((y.mean(axis=1) - g) ** 2).sum() / (n - 1)
    msc = n * ((y.mean(axis=0) - g) ** 2).sum() / (k - 1)
    res = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + g
    mse = (res ** 2).sum() / ((n - 1) * (k - 1))
    return float((msr - mse) / (msr + (k - 1) * mse + k / n * (msc - mse)))


def study(name: str, x: np.ndarray, splits: int, rng: np.random.Generator, half: int = 25) -> dict:
    nt = x.shape[0]
    d = d_study(g_study(x), half)
    pear, icc, cov_e, cov_p = [], [], [], []
    for _ in range(splits):
        perm = rng.permutation(nt)
        A, B = x[perm[:half]], x[perm[half:2 * half]]
        a, b = A.mean(axis=0), B.mean(axis=0)
        r, i = float(np.corrcoef(a, b)[0, 1]), icc_a1(a, b)
        pear.append(r)
        icc.append(i)
        dh = d_study(g_study(A), half)
        cov_e.append((dh.erho2_lower, dh.erho2_upper))
        cov_p.append((dh.phi_lower, dh.phi_upper))
    pear, icc = np.array(pear), np.array(icc)
    ce, cp = np.array(cov_e), np.array(cov_p)
    cov_e = (ce[:, 0] <= pear.mean()) & (pear.mean() <= ce[:, 1])
    cov_p = (cp[:, 0] <= icc.mean()) & (icc.mean() <= cp[:, 1])
    return {"data": name, "systems": x.shape[1], "topics": nt,
            "erho2_25": d.erho2, "erho2_lo": d.erho2_lower, "erho2_hi": d.erho2_upper,
            "mean_pearson": pear.mean(),
            "pearson_in": d.erho2_lower <= pear.mean() <= d.erho2_upper,
            "phi_25": d.phi, "phi_lo": d.phi_lower, "phi_hi": d.phi_upper,
            "mean_icc": icc.mean(), "icc_in": d.phi_lower <= icc.mean() <= d.phi_upper,
            "half_cover_erho2": float(np.mean(cov_e)), "half_cover_phi": float(np.mean(cov_p))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--splits", type=int, default=2000)
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3])
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for seed in a.seeds:
        sim = simulate(40, 50, 1000, seed=seed)
        df = engine.evaluate(sim.pool(100), sim.runs, ["map"])
        rows.append(study(f"simulated seed {seed} (MAP)", score_matrix(df, "map", fill=0.0).to_numpy(), a.splits, rng))
    p = ROOT.parent / "shared" / "data" / "gt" / "adhoc3.csv"
    if p.exists():
        rows.append(study("TREC-3 ad hoc (AP)", pd.read_csv(p).to_numpy(float), a.splits, rng))
    t = pd.DataFrame(rows)
    print(f"{a.splits} random splits of 50 topics into disjoint halves of 25; 95% intervals")
    print("| data | E rho^2(25) [95%] | mean Pearson r | inside | Phi(25) [95%] | mean ICC(A,1) | inside "
          "| half-study coverage E rho^2 / Phi |")
    print("|---|---|---:|---|---|---:|---|---|")
    for r in t.itertuples():
        print(f"| {r.data} | {r.erho2_25:.3f} [{r.erho2_lo:.3f}, {r.erho2_hi:.3f}] | {r.mean_pearson:.3f} | "
              f"{'yes' if r.pearson_in else 'NO'} | {r.phi_25:.3f} [{r.phi_lo:.3f}, {r.phi_hi:.3f}] | "
              f"{r.mean_icc:.3f} | {'yes' if r.icc_in else 'NO'} | "
              f"{r.half_cover_erho2:.0%} / {r.half_cover_phi:.0%} |")


if __name__ == "__main__":
    main()
