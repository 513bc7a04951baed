"""The intake screens' view model: run submission (engine.campaign.intake) and rank fusion (engine.pooling)."""
from __future__ import annotations

from pathlib import Path

from engine.errors import CranfieldError

from .scores import Intake
from engine.util import fs


class IntakeView:
    """The submit and fuse screens' engine calls."""

    # ------------------------------------------------------------------ submissions and fusion
    def submit_runs(self, paths: list[str], *, group: str | None = None, manual: bool = False,
                    priority: int | None = None, check_only: bool = False, pooled: bool = True) -> "Intake":
        """Submit run files to the campaign through engine.campaign.intake.submit (as `cranfield submit`): the
        report says accepted (with each run's metadata, header lines and notes) or refused (every
        problem as file:line: what; nothing copied). The campaign is read afresh from disk."""
        from engine.errors import FormatError
        from engine.campaign.intake import submit
        try:
            res = submit(self.root, [str(p) for p in paths], group=group, manual=manual, priority=priority,
                         dry_run=check_only, pooled=pooled)
        except FormatError as exc:
            return Intake(False, [str(p) for p in exc.problems] + ([f"hint: {exc.hint}"] if exc.hint else []), [])
        except CranfieldError as exc:
            return Intake(False, [str(exc)], [])
        from engine.campaign.config import CONFIG_NAME, read_config
        meta = {} if check_only else (read_config(self.root / CONFIG_NAME).get("runs") or {})
        lines = []
        for sub in res:
            lines.append(f"{'ok' if check_only else 'accepted'}: {sub.path} -> run {sub.tag} ({sub.lines} lines, "
                         f"{sub.topics} topics, sha256 {sub.checksum[:12]})")
            if sub.tag in meta:      # as recorded in campaign.yaml (runs.TAG)
                lines.append(f"  runs.{sub.tag}: " + ", ".join(f"{k} {v}" for k, v in meta[sub.tag].items()))
            lines += [f"  header: {h}" for h in sub.header] + [f"  note: {n}" for n in sub.notes]
        return Intake(True, lines, [str(sub.tag) for sub in res])

    @staticmethod
    def fusion_methods() -> tuple[str, ...]:
        """The rank-fusion methods the engine offers (engine.pooling.rank_fusion.METHODS)."""
        from engine.pooling.rank_fusion import METHODS
        return tuple(METHODS)

    def fuse_runs(self, tags: list[str], method: str, out_dir: Path, *, tag: str | None = None,
                  k: float = 60.0, depth: int | None = None) -> tuple[Path, str]:
        """Fuse the runs `tags` (engine.pooling.rank_fusion, as `cranfield fuse --campaign DIR --run ...`) and write
        the fused run to out_dir/TAG.txt (default tag fused-METHOD), `depth` documents per topic (default:
        the campaign's submission depth limit, so the fused run can be submitted): (full path, summary)."""
        from engine.formats.runs import write_run
        from engine.pooling.rank_fusion import fuse, select_runs
        from engine.campaign.intake import depth_limit
        depth = depth if depth is not None else depth_limit(self._engine_campaign())
        runs = select_runs(self.run_rows(list(tags)), list(tags), str(self.root))
        tag = tag or f"fused-{method}"
        out = fuse(runs, method, k=k, depth=depth, tag=tag)
        path = (Path(out_dir) / f"{tag}.txt").resolve()
        fs.makedirs(path.parent)
        write_run(path, out, tag=tag)
        n = runs["run"].astype(str).nunique()
        return path, (f"wrote {path}: {method} of {n} runs ({', '.join(tags)}), {out['topic'].nunique()} topics, "
                      f"{len(out)} lines, tag {tag}")

