"""Automatic nugget assignment against the truth on simulated RAG campaigns (issue 29).

    python3 benchmarks/rag_nuggets.py [--runs 20] [--topics 30] [--errors 0,0.1,0.2,0.3] [--seeds 7,8,9]
                                      [--concurrency 4] [--batch 10]

For each seed, `simulate --rag` writes a campaign (answer runs of known quality with omissions,
paraphrases and wrong citations); its true assignments become source `truth`. For each error rate, the
loopback truth endpoint (each label changed with that probability) assigns every (answer, nugget)
through the automatic client (engine.nuggets.auto: batched calls, cache, log). Printed side by side:
Kendall tau between the runs ranked by automatic and by true scores (all, weighted, strict vital),
Cohen's kappa of the automatic labels against the truth, and the cost: HTTP calls, tokens, wall
seconds, and the assessor hours the same assignments would take a person at `--human-seconds` per
assignment (default: the average seconds per relevance judgment of the planner's time model, thesis
Table 3.4, a stand-in until a campaign's own logs give nugget-assignment times).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    from engine.judging.auto import JudgeSettings
    from engine.nuggets.auto import auto_assign
    from engine.nuggets.campaign import agreement, campaign_answers
    from engine.nuggets.simulate import TruthEndpoint, import_truth, simulate_rag, write_rag_campaign
    from engine.nuggets.store import current_nuggets
    from engine.planning.cost import TABLE_3_4

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--topics", type=int, default=30)
    ap.add_argument("--errors", default="0,0.1,0.2,0.3")
    ap.add_argument("--seeds", default="7,8,9")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--human-seconds", type=float, default=TABLE_3_4["average"].judgment_avg)
    a = ap.parse_args()
    errors = [float(x) for x in a.errors.split(",")]
    seeds = [int(x) for x in a.seeds.split(",")]
    print(f"# Automatic nugget assignment vs truth: {a.runs} runs x {a.topics} topics, batch {a.batch}, "
          f"concurrency {a.concurrency}\n")
    print("| seed | error | tau all | tau weighted | tau strict_vital | kappa | label accuracy | calls | "
          "tokens | wall s | human h (est.) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = {}
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            root = write_rag_campaign(simulate_rag(a.runs, a.topics, seed=seed), Path(tmp) / "c")
            import_truth(root, "truth")
            answers, nug = campaign_answers(root), current_nuggets(root)
            for e in errors:
                src = f"auto-e{e:g}"
                with TruthEndpoint(root, error=e, seed=seed) as ep:
                    s = JudgeSettings(endpoint=ep.url, model=f"truth-e{e:g}", concurrency=a.concurrency,
                                      retries=2, backoff=0.05, timeout=30)
                    t0 = time.perf_counter()
                    res = auto_assign(root, src, s, answers, nug, batch=a.batch)
                    wall = time.perf_counter() - t0
                if res.failed or res.stopped:
                    raise SystemExit(f"automatic run failed: {res.failed[:3]} {res.stopped}")
                taus = [agreement(root, "truth", src, m) for m in ("all", "weighted", "strict_vital")]
                k = taus[0]
                worst[e] = min(worst.get(e, 1.0), k.tau)
                human_h = res.items * a.human_seconds / 3600
                print(f"| {seed} | {e:.2f} | {taus[0].tau:.3f} | {taus[1].tau:.3f} | {taus[2].tau:.3f} | "
                      f"{k.kappa:.3f} | {k.accuracy:.3f} | {res.calls} | {res.prompt_tokens + res.completion_tokens:,} | "
                      f"{wall:.1f} | {human_h:.1f} |")
    print(f"\nassignments in the last campaign: {res.items:,}; human hours at {a.human_seconds:g} s per assignment "
          f"(an assumed rate; see --human-seconds)")
    print("worst tau (all) per error rate: " + ", ".join(f"{e:g}: {t:.3f}" for e, t in worst.items()))


if __name__ == "__main__":
    main()
