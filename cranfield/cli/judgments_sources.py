"""`cranfield judgments import | auto | sources`: named judgment sources (added to `cranfield judgments`)."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError, Warnings

from .model_options import add_model_options, model_settings


def register_actions(jsub) -> None:
    """Add the source actions to the `judgments` sub-parser."""
    i = jsub.add_parser("import", help="import a label set as a named judgment source",
                        description="Import qrels (one source) or a 6-column file `topic Q0 docid judgment "
                                    "confidence runid` (one source per runid) into judgments/sources/.")
    i.add_argument("campaign")
    i.add_argument("file")
    i.add_argument("--name", default=None, help="source name (qrels; default the file stem) or prefix (6-column)")
    i.add_argument("--format", choices=["qrels", "rj6"], default=None, help="default: by the field count")
    i.add_argument("--kind", default="imported", help="e.g. human, auto (stored with the source)")
    i.add_argument("--model", default="", help="the automatic judge's model, when known")
    i.add_argument("--prompt-version", default="", help="the automatic judge's prompt version, when known")
    i.set_defaults(func=run_import)

    s = jsub.add_parser("sources", help="list the campaign's judgment sources")
    s.add_argument("campaign")
    s.set_defaults(func=run_sources)

    c = jsub.add_parser("card", help="judge cards: each source against the people's judgments",
                        description="One card per judgment source, against the gold source (people): kappa and "
                                    "alpha with bootstrap intervals over topics, the confusion matrix with exact "
                                    "intervals, false-positive and false-negative rates by grade (Wilson), tau, "
                                    "tau_ap and tau@10 of the runs with topic-bootstrap intervals, cost and time "
                                    "from the source's records, and a caution where the shared sample is small.")
    c.add_argument("campaign")
    c.add_argument("--source", action="append", dest="sources", help="the source (repeatable; default: every "
                                                                      "source independent of the gold one)")
    c.add_argument("--gold", default="human", help="the people's source (default human)")
    c.add_argument("-m", "--measure", default=None, help="measure ranking the runs (default: the campaign's first)")
    c.add_argument("-l", "--rel-level", type=int, default=None, help="relevant from this grade (default: the "
                                                                      "campaign's binary_threshold)")
    c.add_argument("--boot", type=int, default=1000, help="bootstrap resamples of topics (default 1000)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of the intervals (default 0.05)")
    c.add_argument("--format", choices=["md", "text", "json"], default="text")
    c.set_defaults(func=run_card)

    a = jsub.add_parser("auto", help="judge the pool with an LLM behind an OpenAI-compatible endpoint",
                        description="Send each pooled (topic, document) to an OpenAI-compatible chat endpoint "
                                    "(vLLM, llama.cpp server, Ollama, hosted APIs) and record the grades as a "
                                    "judgment source. Cached by (topic, document, prompt, model); rerun to resume.")
    a.add_argument("campaign")
    add_model_options(a)
    a.add_argument("--prompt", default=None, help="prompt template file ({query} {description} {narrative} "
                                                  "{passage}); default: the UMBRELA-style prompt")
    a.add_argument("--prompt-version", default=None, help="label stored with each grade (default: umbrela-v2 "
                                                           "or the prompt file's hash)")
    a.add_argument("--source", default=None, help="source name (default llm-MODEL)")
    a.add_argument("--pool", default=None, help="judge pools/pool-NAME.tsv (default: the newest pool)")
    a.add_argument("--depth", type=int, default=None, help="judge the depth-K pool of the pooled runs")
    a.add_argument("--topic", action="append", dest="topics")
    a.add_argument("--judge-empty", action="store_true",
                   help="also ask for documents without text (default: not sent, counted)")
    a.add_argument("--max-tokens", type=int, default=200)
    a.add_argument("--grade-map", default=None, metavar="G=H,...",
                   help="record the model's grade G as H, e.g. 3=2 for a 0-2 campaign scale (the cache keeps "
                        "the model's own grade)")
    a.add_argument("--dry-run", action="store_true", help="print the estimate and stop")
    a.set_defaults(func=run_auto)


def run_import(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.judgments.sources import import_source
    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    names = import_source(camp.root, args.file, args.name, args.format, args.kind, args.model,
                          args.prompt_version, w)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    print(f"imported {len(names)} source(s): {', '.join(names)}")
    return 0


def run_card(args) -> int:
    import json

    from engine.campaign.campaign import load_campaign
    from engine.judgments.judge_card import card_text, judge_cards
    from engine.planning.cost import CostModel, model_from_config
    w = Warnings()
    if args.boot < 0:
        raise CranfieldError("--boot must be 0 or more resamples")
    if not 0 < args.alpha < 1:
        raise CranfieldError("--alpha must lie between 0 and 1, e.g. 0.05 for 95% intervals")
    camp = load_campaign(args.campaign, warnings=w)
    cm = model_from_config(camp.config.get("cost"), CostModel())
    cards = judge_cards(camp, args.gold, args.sources, measure=args.measure, threshold=args.rel_level,
                        n_boot=args.boot, seed=args.seed, alpha=args.alpha,
                        seconds_per_judgment=cm.times(None).judgment_avg, cost_source=cm.describe())
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    if not cards:
        raise CranfieldError(f"{args.campaign}: no judgment source shares documents with {args.gold}; import one "
                             f"(`cranfield judgments import`) or judge with a model (`cranfield judgments auto`)")
    if args.format == "json":
        sys.stdout.write(json.dumps([c.to_dict() for c in cards], indent=1, default=str) + "\n")
        return 0
    sys.stdout.write("\n".join(card_text(c, "markdown" if args.format == "md" else "text") for c in cards))
    return 0


def run_sources(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.judgments.sources import list_sources, source_config, source_judgments
    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    off = source_config(camp)["official"]
    print(f"{'source':<28} {'kind':<9} {'judged':>7}  model / prompt")
    for s in list_sources(camp):
        n = len(source_judgments(camp, s.name, w))
        extra = " / ".join(x for x in (s.model, s.prompt_version) if x)
        print(f"{s.name + (' *' if s.name == off else ''):<28} {s.kind:<9} {n:>7}  {extra}")
    print("(* official source)")
    from engine.judging.sessions import edit_rates
    er = edit_rates(camp.log())
    if len(er) and (er["shown_auto"].sum() or er["cannot_judge"].sum()):
        print("\npost-editing of automatic labels (judging screen):")
        print(f"{'assessor':<20} {'shown':>6} {'accepted':>9} {'changed':>8} {'edit rate':>10} {'cannot judge':>13}")
        for r in er.itertuples():
            rate = "" if r.edit_rate != r.edit_rate else f"{r.edit_rate:.3f}"
            print(f"{r.assessor:<20} {r.shown_auto:>6} {r.accepted:>9} {r.changed:>8} {rate:>10} {r.cannot_judge:>13}")
    return 0


def run_auto(args) -> int:
    from engine.judging.auto import (DEFAULT_PROMPT, JudgeSettings, check_settings, plan, pooled_pairs, prompt_version_of,
        run_auto_judge)
    from engine.campaign.campaign import load_campaign
    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    if args.prompt:
        try:
            from engine.util import fs
            text = fs.read_text(args.prompt, encoding="utf-8")
        except OSError as exc:
            raise CranfieldError(f"{args.prompt}: cannot read the prompt file ({exc.strerror})") from None
        if "{passage}" not in text:
            raise CranfieldError(f"{args.prompt}: the prompt has no {{passage}} placeholder (and {{query}} for the "
                                 f"topic); the document would not be sent")
    else:
        text = DEFAULT_PROMPT
    grades = tuple(sorted(camp.scale()))
    if text == DEFAULT_PROMPT:
        grades = (0, 1, 2, 3)
    gmap = {}
    for item in (args.grade_map or "").split(","):
        if item.strip():
            try:
                k, v = item.split("=")
                gmap[int(k)] = int(v)
            except ValueError:
                raise CranfieldError(f"--grade-map {args.grade_map!r}: write G=H pairs, e.g. 3=2") from None
    bad = sorted(set(gmap.values()) - set(camp.scale()))
    if bad:
        raise CranfieldError(f"--grade-map maps to grade(s) {bad} that campaign.yaml relevance.scale does not list")
    st = JudgeSettings(**model_settings(args), prompt=text, prompt_version=prompt_version_of(text, args.prompt_version),
                       max_tokens=args.max_tokens, grades=grades, grade_map=gmap,
                       scale=tuple(sorted(camp.scale())), judge_empty=args.judge_empty)
    check_settings(st)
    source = args.source or "llm-" + "".join(c if c.isalnum() or c in "._-" else "-" for c in args.model)
    pairs = pooled_pairs(camp, args.pool, args.depth, args.topics)
    pl = plan(camp, source, st, pairs)
    err = sys.stderr
    print(f"source {source}: {pl.total} pooled pairs; {pl.already} already judged, {len(pl.cached)} from the "
          f"cache, {len(pl.pairs)} to ask" + (f", {pl.empty} without document text not sent" if pl.empty else ""),
          file=err)
    print(f"estimate: {len(pl.pairs)} calls (more if answers must be retried), about {pl.prompt_tokens:,} "
          f"prompt tokens and at most {pl.max_completion_tokens:,} completion tokens "
          f"(model {st.model}, prompt {st.prompt_version})", file=err)
    if args.dry_run:
        return 0
    step = max(1, len(pl.pairs) // 20)

    def progress(done, n, res):
        if n and (done == n or done % step == 0):
            print(f"  {done}/{n} done · {res.judged} judged · {res.unparsed} unparseable · "
                  f"{res.http_errors} request errors", file=err)

    res = run_auto_judge(camp, source, st, pairs, progress, pl)
    for p in w:
        print(f"warning: {p}", file=err)
    print(f"{res.judged} judged by {res.calls} calls, {res.from_cache} from the cache, {res.already} already "
          f"recorded; {res.unparsed} unparseable answers and {res.http_errors} failed requests were retried"
          + (f"; tokens used: {res.prompt_tokens:,} prompt, {res.completion_tokens:,} completion"
             if res.prompt_tokens else ""))
    if res.stopped:
        print(f"{res.stop_reason} ({res.not_tried} pair(s) not tried)", file=err)
    if res.failed or res.stopped:
        print(f"{len(res.failed)} pair(s) not judged after {st.retries} retries (see "
              f"judgments/sources/{source}.errors.jsonl; rerun to try again):", file=err)
        for t, d, why in res.failed[:10]:
            print(f"  topic {t} doc {d}: {why}", file=err)
        return 1
    return 0
