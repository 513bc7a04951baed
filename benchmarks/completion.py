"""Completion of biased judgments on simulated campaigns with a known text signal (Buettcher et al. 2007).

    python3 benchmarks/completion.py [--runs 30] [--topics 25] [--signals 0.8,0] [--seed 11]

For each text signal S the simulator writes a campaign whose relevant documents carry a topic vocabulary
with strength S (S = 0: text says nothing about relevance), judged to pool depth 50. It then prints
- classifier quality against the training fraction (Table 6 of the paper),
- the automatic-only experiment (judgments from automatic runs only; Tables 3 and 8): Kendall tau between
  the rankings under the full and the reduced judgments, without completion and completed by KLD and SVM,
  for MRR, P@10, P@20, nDCG@20, AP, bpref, P@20(j) (P@cond.20: unjudged documents removed) and RankEff,
  over all runs and over the manual runs.
The Markdown tables it prints are the ones in docs/completion.md.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MEASURES = ["recip_rank", "P.10", "P.20", "ndcg_cut.20", "map", "bpref", "P@cond.20", "RankEff"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--topics", type=int, default=25)
    ap.add_argument("--depth", type=int, default=200)
    ap.add_argument("--pool-depth", type=int, default=50)
    ap.add_argument("--signals", default="0.8,0")
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    from engine.campaign.campaign import load_campaign
    from engine.completion.experiment import classifier_quality, completion_poolbias
    from engine.documents.store import DocStore
    from engine.simulation.campaigns import simulate, write_campaign

    for sig in [float(x) for x in a.signals.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "c"
            sim = simulate(a.runs, a.topics, a.depth, a.seed, grades=(0, 1, 2), manual_fraction=0.25)
            write_campaign(sim, out, pool_depth=a.pool_depth, docs=a.pool_depth, text_signal=sig)
            camp = load_campaign(out)
            st = DocStore.for_campaign(out)
            q = camp.qrels()
            t0 = time.perf_counter()
            quality = classifier_quality(q, st, [0.05, 0.1, 0.2, 0.4, 0.6, 0.8], rel_level=camp.binary_threshold(),
                                         seed=a.seed)
            t1 = time.perf_counter()
            summ, det = completion_poolbias(q, camp.runs(), camp.run_meta(), MEASURES, st, mode="manual",
                                            depth=a.pool_depth, rel_level=camp.binary_threshold())
            t2 = time.perf_counter()
            meta = camp.run_meta()
            print(f"\n## Text signal {sig}: {a.runs} runs ({int((meta['type'] == 'manual').sum())} manual), "
                  f"{a.topics} topics, pool depth {a.pool_depth}, {len(q)} judgments, {len(st)} documents with text\n")
            print("Classifier quality (per-topic precision / recall / F1, macro-averaged):\n")
            piv = quality.pivot(index="train_fraction", columns="classifier", values=["precision", "recall", "f1"])
            print("| training | " + " | ".join(f"{c} {m}" for m, c in piv.columns) + " |")
            print("|---" * (len(piv.columns) + 1) + "|")
            for f, r in piv.iterrows():
                print(f"| {f:.0%} | " + " | ".join(f"{v:.3f}" for v in r.to_numpy()) + " |")
            print(f"\nAutomatic-only judgments (manual runs' unique documents removed), {det['removed'].iat[0]} "
                  f"judgments removed; Kendall tau against the full judgments (all runs / manual runs):\n")
            print("| measure | none | KLD | SVM | mean abs rank change none / KLD / SVM | RMS none / KLD / SVM |")
            print("|---|---|---|---|---|---|")
            for m in summ["measure"].unique():
                s = summ[summ["measure"] == m].set_index("complete")
                cell = lambda c, s=s: f"{s.loc[c, 'tau_all']:.4f} / {s.loc[c, 'tau_affected']:.4f}"
                print(f"| {m} | {cell('none')} | {cell('kld')} | {cell('svm')} | "
                      + " / ".join(f"{s.loc[c, 'mean_abs_rank_change']:.2f}" for c in ("none", "kld", "svm")) + " | "
                      + " / ".join(f"{s.loc[c, 'rms']:.4f}" for c in ("none", "kld", "svm")) + " |")
            print(f"\n(classifier quality {t1 - t0:.1f} s, automatic-only experiment {t2 - t1:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
