"""Training on a many-core machine: bpetite's ``train_files`` against rustbpe, standalone.

For a machine with nothing but Python, ``regex`` and a rustbpe wheel (no registry, no
uv): from the repository root, ``python3 benchmarks/many_cores.py``. It copies up to
``CORPUS_GB`` (default 1) of the machine's own UTF-8 text files (sources, headers,
docs under ``/usr``, ``/opt``) into ``/tmp/corpus``, one document per file, filling
what those files leave short of the size with ``web_corpus``'s generated web text
(one lexicon, seed 0; each of the machine's CPUs writes its own stream), then runs
each entry of ``PLAN`` (default ``bpetite:16,rustbpe:16,bpetite:16,rustbpe:16``) in a
fresh process: ``bpetite:N`` is ``train_files`` with N workers; ``bpetite1merge:N`` is
``count_files`` with N workers, then ``Tokenizer.train_from_counts`` (the merge loop in
one process); ``rustbpe:N`` is rustbpe on N threads (its wheels, for each Python they
were built for, unpacked from ``RUSTBPE_WHEELS``, default this folder). Vocabulary
65,536, ``cl100k``. Each result (seconds, bpetite's phases, peak RSS, a digest of the
merged tokens) is a JSON line on stdout and in ``$OUT/results.jsonl``; last, each
run's merged tokens are compared with the first's, naming the first merge that
differs. docs/scaling.md has the figures.
"""

import hashlib
import json
import multiprocessing
import os
import pickle
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

OUT = Path(os.environ.get("OUT", "/tmp/out"))
CORPUS = Path("/tmp/corpus")
LIMIT = int(float(os.environ.get("CORPUS_GB", "1.0")) * 1e9)
SUFFIXES = {
    ".py",
    ".pyi",
    ".c",
    ".h",
    ".hpp",
    ".cpp",
    ".cc",
    ".cu",
    ".cuh",
    ".txt",
    ".md",
    ".rst",
    ".html",
    ".js",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".xml",
    ".sh",
}
VOCAB = 65536
ROOTS = ["/usr/lib", "/usr/local/lib", "/usr/include", "/usr/share", "/opt", "/usr/local/include"]


def log(record: dict[str, Any]) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    with (OUT / "results.jsonl").open("a") as out:
        out.write(line + "\n")


def generate(part: int, size: int) -> tuple[int, int]:
    """Write `size` bytes of generated web text as ``g<part>-<n>.txt``; (files, bytes).

    Every part shares seed 0's lexicons (so the parts read as one corpus) and draws its
    documents from a stream of its own.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.web_corpus import Generator

    generator = Generator(0)
    generator.rng.seed(f"part {part}")
    files = total = 0
    while total < size:
        data = generator.document().encode("utf-8")
        (CORPUS / f"g{part:02d}-{files:06d}.txt").write_bytes(data)
        files += 1
        total += len(data)
    return files, total


def build() -> None:
    CORPUS.mkdir(parents=True, exist_ok=True)
    total = files = 0
    start = time.perf_counter()
    for root in ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if path.suffix not in SUFFIXES or path.is_symlink():
                    continue
                try:
                    data = path.read_bytes()
                    data.decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if not data or len(data) > 8_000_000:
                    continue
                (CORPUS / f"{files:07d}.txt").write_bytes(data)
                files += 1
                total += len(data)
                if total >= LIMIT:
                    break
            if total >= LIMIT:
                break
        if total >= LIMIT:
            break
    machine_bytes, machine_files = total, files
    if total < LIMIT:
        parts = os.cpu_count() or 1
        share = -(-(LIMIT - total) // parts)
        with multiprocessing.Pool(parts) as pool:
            for made, size in pool.starmap(generate, [(i, share) for i in range(parts)]):
                files += made
                total += size
    log(
        {
            "corpus_bytes": total,
            "files": files,
            "machine_bytes": machine_bytes,
            "machine_files": machine_files,
            "build_s": time.perf_counter() - start,
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
        }
    )


def child(kind: str, workers: int) -> None:
    """One training in this process; prints a JSON line."""
    files = sorted(CORPUS.iterdir())
    marks: dict[str, float] = {}
    begin = time.perf_counter()
    if kind.startswith("bpetite"):
        sys.path.insert(0, "src")
        from bpetite import train_files

        def progress(event: Any) -> None:
            if event.task == "merge" and event.stage != "update":
                marks[event.stage] = time.perf_counter()

        if kind == "bpetite1merge":  # count in the workers, merge in this process only
            from bpetite import Tokenizer
            from bpetite.corpus import count_files

            counts = count_files([str(CORPUS)], pattern="cl100k", workers=workers)
            tokenizer = Tokenizer.train_from_counts(
                counts, VOCAB, pattern="cl100k", progress=progress
            )
        else:
            tokenizer = train_files(
                [str(CORPUS)], VOCAB, pattern="cl100k", workers=workers, progress=progress
            )
        tokens = [tokenizer.token_bytes(256 + i) for i in range(len(tokenizer.merges))]
    else:
        sys.path.insert(0, "/tmp/wheel")  # the carried wheel, unpacked by the main process
        import rustbpe

        sys.path.insert(0, "src")
        from bpetite import PRESETS

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(
            (f.read_bytes().decode("utf-8") for f in files), VOCAB, pattern=PRESETS["cl100k"]
        )
        ranked = sorted(tok.get_mergeable_ranks(), key=lambda item: item[1])
        tokens = [bytes(t) for t, _ in ranked][256:]
    end = time.perf_counter()

    Path(f"/tmp/tokens-{kind}-{workers}.pickle").write_bytes(pickle.dumps(tokens))
    digest = hashlib.sha256(b"\0".join(tokens)).hexdigest()[:16]
    record = {
        "kind": kind,
        "workers": workers,
        "seconds": end - begin,
        "merges": len(tokens),
        "digest": digest,
        "peak_rss_mb_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_rss_mb_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }
    if "start" in marks and "done" in marks:
        record["count_s"] = marks["start"] - begin
        record["merge_s"] = marks["done"] - marks["start"]
        record["build_s"] = end - marks["done"]
    print("RESULT " + json.dumps(record), flush=True)


def measure(kind: str, workers: int) -> None:
    env = dict(os.environ, RAYON_NUM_THREADS=str(workers))
    done = subprocess.run(
        [sys.executable, __file__, "child", kind, str(workers)],
        capture_output=True,
        text=True,
        env=env,
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            log(json.loads(line[7:]))
            return
    log({"kind": kind, "workers": workers, "error": done.stderr[-3000:]})


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]))
        sys.exit(0)
    OUT.mkdir(parents=True, exist_ok=True)

    wheels = Path(os.environ.get("RUSTBPE_WHEELS", Path(__file__).parent))
    for wheel in wheels.glob("rustbpe-*.whl"):
        zipfile.ZipFile(wheel).extractall("/tmp/wheel")
    build()
    plan = os.environ.get("PLAN", "bpetite:16,rustbpe:16,bpetite:16,rustbpe:16").split(",")
    for item in plan:
        kind, workers = item.split(":")
        measure(kind, int(workers))

    found = {p.stem: pickle.loads(p.read_bytes()) for p in Path("/tmp").glob("tokens-*.pickle")}
    names = sorted(found)
    for other in names[1:]:
        a, b = found[names[0]], found[other]
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        log(
            {
                "compare": [names[0], other],
                "first_difference": first,
                "tokens": None if first is None else [repr(a[first]), repr(b[first])],
                "around": None
                if first is None
                else [repr(t) for t in a[max(first - 2, 0) : first + 3]]
                + ["|"]
                + [repr(t) for t in b[max(first - 2, 0) : first + 3]],
            }
        )
