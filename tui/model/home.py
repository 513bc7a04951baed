"""The home screen's view model: campaign counts and the problems list."""
from __future__ import annotations

import numpy as np


class HomeView:
    """The home (h) screen's facts and problems."""

    # ------------------------------------------------------------------ home
    def home_facts(self) -> dict:
        """Counts shown on the campaign home screen."""
        q = self.qrels
        judged = q[q["grade"] >= 0]
        rel_level = self.options.rel_level
        return {"name": self.name, "description": str(self.config.get("description") or ""),
                "root": str(self.root), "runs": int(len(self.run_meta)) if self.large else (int(self.runs["run"].nunique()) if len(self.runs) else 0),
                "topics": int(len(set(self.topics["topic"]) | set(q["topic"]))),
                "judged": int(len(judged)), "relevant": int((judged["grade"] >= rel_level).sum()),
                "unjudged_pooled": int((q["grade"] < 0).sum()),
                "groups": int(self.run_meta["group"].replace("", np.nan).nunique()),
                "manual": int((self.run_meta["type"] == "manual").sum()),
                "pooled": int(self.run_meta["pooled"].sum()),
                "answer_runs": int(getattr(self, "answer_run_count", 0))}


    def problems(self, limit: int = 200) -> list[str]:
        """Warnings for the home screen: file problems, runs with unjudged top-10 holes, topics with R = 0."""
        out = ["ERROR " + e for e in self.load_errors()]
        out += [str(p) for p in list(self.warnings)[:limit]]
        s = self.scores
        if s is not None:
            per_run, n_top = s.holes, s.n_top
            for i in np.argsort(-per_run, kind="stable"):
                if per_run[i] > 0:
                    out.append(f"run {s.runs[i]}: {per_run[i]} of its {n_top[i]} top-10 documents are unjudged")
            no_rel = [t for t, n in zip(s.topics, s.t_num_rel) if n == 0]
            if no_rel:
                out.append(f"{len(no_rel)} topic(s) without relevant documents: {', '.join(no_rel[:12])}"
                           + (" ..." if len(no_rel) > 12 else ""))
        return out

