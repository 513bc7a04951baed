"""Document store at scale: stream a synthetic TREC SGML file of N documents into docs/docs.sqlite (one
process, peak memory measured), then time random fetches by id.

    python3 benchmarks/docstore.py [--docs 1000000] [--fetches 2000] [--dir /tmp/cranfield-docs]

Prints the file size, import wall time and documents per second, the importing process's peak RSS,
the store size, and fetch latency (median, p99, max) over random ids, each fetch a separate query.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = [f"w{i:05d}" for i in range(50000)]


def write_sgml(path: Path, n: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            body = " ".join(rng.choices(WORDS, k=40))
            fh.write(f"<DOC>\n<DOCNO> DOC-{i:08d} </DOCNO>\n<HEADLINE>{' '.join(rng.choices(WORDS, k=4))}"
                     f"</HEADLINE>\n<TEXT>\n{body}\n</TEXT>\n</DOC>\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--fetches", type=int, default=2000)
    ap.add_argument("--dir", default="/tmp/cranfield-docs")
    a = ap.parse_args()
    d = Path(a.dir)
    shutil.rmtree(d, ignore_errors=True)
    (d / "docs").mkdir(parents=True)
    (d / "campaign.yaml").write_text("name: docs benchmark\n")
    src = d / "collection.sgml"
    t0 = time.perf_counter()
    write_sgml(src, a.docs)
    print(f"wrote {a.docs:,} documents of TREC SGML ({src.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "cranfield.cli", "docs", "import", str(d), str(src)], check=True, env=env)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    store = d / "docs" / "docs.sqlite"
    print(f"import: {wall:.1f} s whole process ({a.docs / wall:,.0f} documents/s), peak RSS {peak:.0f} MB, "
          f"store {store.stat().st_size / 1e6:.0f} MB")
    sys.path.insert(0, str(ROOT))
    from engine.documents.store import DocStore
    t0 = time.perf_counter()
    st = DocStore.open(store)
    open_ms = (time.perf_counter() - t0) * 1e3
    rng = random.Random(7)
    lat = []
    for _ in range(a.fetches):
        i = f"DOC-{rng.randrange(a.docs):08d}"
        t = time.perf_counter()
        doc = st.get(i)
        lat.append((time.perf_counter() - t) * 1e3)
        assert doc is not None and doc.id == i
    lat.sort()
    print(f"open {open_ms:.1f} ms; fetch one document: median {statistics.median(lat):.3f} ms, "
          f"p99 {lat[int(0.99 * len(lat))]:.3f} ms, max {lat[-1]:.3f} ms over {a.fetches} random ids")
    return 0


if __name__ == "__main__":
    sys.exit(main())
