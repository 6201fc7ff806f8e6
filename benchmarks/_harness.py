"""The benchmark run: train and encode with bpetite, the naive design and the Rust libraries.

Everything a ratio compares is measured in this one run on this one machine, because
absolute figures on a shared machine drift from hour to hour while same-run ratios
hold. The results go to ``results.json`` (every sample) and ``results.md`` (tables).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import _checks, _encode, _report, _rust
from benchmarks._timing import ChildRun, Stat, run_child
from bpetite import Tokenizer, count_chunks

REPO_ROOT = Path(__file__).resolve().parent.parent
RUN_PY = REPO_ROOT / "benchmarks" / "run.py"
DEFAULT_OUTPUT = REPO_ROOT / "benchmarks" / "results"
CORPUS_ENV_VAR = "BPETITE_CORPUS"
#: The vocabulary trained on the multilingual text for its encode figures.
MULTILINGUAL_VOCAB = 5000


@dataclass(frozen=True, slots=True)
class Plan:
    """How much to measure: the full run, or the quick one that keeps the harness alive."""

    quick: bool
    vocab_sizes: tuple[int, ...]
    train_repeats: int
    cli_repeats: int
    hf_single_thread_repeats: int
    sentence_runs: int
    naive_sentence_runs: int
    text_repeats: int
    long_sizes: tuple[int, ...]
    long_repeats: int
    files_split: int
    naive_vocab: int

    @classmethod
    def full(cls) -> Plan:
        # Whole-text encodes are the noisiest figures on a shared machine (and cheap),
        # so they get the most repeats; the naive trainer takes 10-35 s, so one run.
        return cls(
            quick=False,
            vocab_sizes=(512, 32000),
            train_repeats=5,
            cli_repeats=3,
            hf_single_thread_repeats=3,
            sentence_runs=100,
            naive_sentence_runs=20,
            text_repeats=9,
            long_sizes=(100_000, 200_000, 400_000),
            long_repeats=5,
            files_split=8,
            naive_vocab=512,
        )

    @classmethod
    def short(cls) -> Plan:
        return cls(
            quick=True,
            vocab_sizes=(512,),
            train_repeats=2,
            cli_repeats=1,
            hf_single_thread_repeats=0,
            sentence_runs=20,
            naive_sentence_runs=3,
            text_repeats=2,
            long_sizes=(100_000, 200_000),
            long_repeats=1,
            files_split=4,
            # The naive trainer needs 10-35 s at 512; 280 runs the same code in a few.
            naive_vocab=280,
        )

    @property
    def model_vocab(self) -> int:
        """The vocabulary the encode figures use: the largest trained."""
        return max(self.vocab_sizes)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/run.py",
        description=(
            "Benchmark bpetite against the spec's naive algorithms, HF tokenizers and "
            "tiktoken on TinyShakespeare, in one run on this machine. Writes results.json "
            "and results.md."
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short run (vocab 512 only, few repeats) that checks the harness works",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help="directory for results.json and results.md (default: benchmarks/results/)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="PATH",
        help=f"TinyShakespeare (default: ${CORPUS_ENV_VAR}, else the committed "
        "tests/data/tinyshakespeare.txt.gz, unpacked into --output)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead of benchmarking, profile the merge loop and the encode path "
        "(cProfile and pyinstrument) and write the reports to --output",
    )
    parser.add_argument("--child", metavar="JSON", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    if args.child:
        from benchmarks._children import run_job

        print(json.dumps(run_job(json.loads(args.child))))
        return 0
    output: Path = args.output
    corpus_path = find_corpus(args.corpus, output)
    if corpus_path is None:
        print(
            "benchmarks: error: TinyShakespeare not found; pass --corpus PATH or set "
            f"{CORPUS_ENV_VAR} to an existing file",
            file=sys.stderr,
        )
        return 1
    output.mkdir(parents=True, exist_ok=True)
    if args.profile:
        from benchmarks._profile import profile

        profile(corpus_path, output)
        return 0
    plan = Plan.short() if args.quick else Plan.full()
    started = time.perf_counter()
    results = Benchmark(plan, corpus_path).run()
    results["total_seconds"] = time.perf_counter() - started
    (output / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    markdown = _report.render(results)
    (output / "results.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    print(f"wrote {output / 'results.json'} and {output / 'results.md'}", file=sys.stderr)
    failures = _checks.harness_failures(results)
    for failure in failures:
        print(f"CHECK FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


def find_corpus(explicit: Path | None, output: Path) -> Path | None:
    """The flag, else the variable, else the committed TinyShakespeare unpacked into `output`.

    The default is the tests' own copy, so every machine measures the same text; a flag
    or variable naming a missing file gives None (an error), never a silent fallback.
    """
    if explicit is None and os.environ.get(CORPUS_ENV_VAR):
        explicit = Path(os.environ[CORPUS_ENV_VAR])
    if explicit is not None:
        return explicit if explicit.is_file() else None
    from tests.datafiles import SHAKESPEARE, unpack

    return unpack([SHAKESPEARE], output) / SHAKESPEARE


def child_command(spec: dict[str, Any]) -> list[str]:
    return [sys.executable, str(RUN_PY), "--child", json.dumps(spec)]


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


class Benchmark:
    """One run of every section; results accumulate in a JSON-ready dict."""

    def __init__(self, plan: Plan, corpus_path: Path) -> None:
        self.plan = plan
        self.corpus_path = corpus_path
        self.corpus = corpus_path.read_bytes().decode("utf-8")
        self.notes: list[str] = []
        self.scratch = Path(tempfile.mkdtemp(prefix="bpetite-bench-"))

    def run(self) -> dict[str, Any]:
        try:
            results: dict[str, Any] = {
                "mode": "quick" if self.plan.quick else "full",
                "machine": machine_info(),
                "corpus": {
                    "path": str(self.corpus_path),
                    "bytes": len(self.corpus.encode("utf-8")),
                    "characters": len(self.corpus),
                },
            }
            models = self.reference_models()
            results["training"], results["merge_agreement"] = self.training(models)
            results["multi_file"] = self.multi_file(models)
            results["encoding"] = self.encoding(models)
            results["ratios"] = ratios(results, self.plan)
            results["machine"]["load_average_end"] = _load_average()
            results["notes"] = self.notes
            return results
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def reference_models(self) -> dict[int, Path]:
        """Train each vocabulary once in this process (untimed) and save its artifact.

        The measured trainings run in children; these artifacts feed the encode
        section, ``Tokenizer.load`` timing and the merge-agreement checks.
        """
        paths: dict[int, Path] = {}
        for vocab_size in sorted({512, self.plan.naive_vocab, *self.plan.vocab_sizes}):
            log(f"reference model: training vocab {vocab_size} in-process (untimed)")
            path = self.scratch / f"bpetite-{vocab_size}.json"
            Tokenizer.train(self.corpus, vocab_size).save(str(path))
            paths[vocab_size] = path
        return paths

    # Training -------------------------------------------------------------------------

    def training(
        self, models: dict[int, Path]
    ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        """Every training in a fresh child, the implementations interleaved per repeat."""
        plan = self.plan
        corpus = [str(self.corpus_path)]
        jobs: list[TrainJob] = []
        for vocab_size in plan.vocab_sizes:
            jobs.append(TrainJob("bpetite", vocab_size, plan.train_repeats, {"job": "bpetite"}))
            if _rust.available("tokenizers"):
                jobs.append(TrainJob("hf", vocab_size, plan.train_repeats, {"job": "hf"}))
        if _rust.available("tokenizers") and plan.hf_single_thread_repeats:
            jobs.append(
                TrainJob(
                    "hf-1-thread",
                    plan.model_vocab,
                    plan.hf_single_thread_repeats,
                    {"job": "hf"},
                    env={"RAYON_NUM_THREADS": "1"},
                )
            )
        if not _rust.available("tokenizers"):
            self.notes.append("HF tokenizers is not installed: its trainer was skipped.")
        if plan.naive_vocab not in plan.vocab_sizes:
            jobs.append(
                TrainJob("bpetite", plan.naive_vocab, plan.train_repeats, {"job": "bpetite"})
            )
        jobs.append(TrainJob("naive", plan.naive_vocab, 1, {"job": "naive"}))
        for vocab_size in plan.vocab_sizes:
            jobs.append(TrainJob("cli", vocab_size, plan.cli_repeats, {}, cli=True))

        agreement_files: dict[str, Path] = {}
        for rep in range(max(job.repeats for job in jobs)):
            for job in jobs:
                if rep >= job.repeats:
                    continue
                spec = {**job.spec, "corpus": corpus, "vocab_size": job.vocab_size}
                if rep == 0 and job.name in ("naive", "hf"):
                    out = self.scratch / f"merges-{job.name}-{job.vocab_size}.json"
                    spec["merges_out"] = str(out)
                    agreement_files[f"{job.name}-{job.vocab_size}"] = out
                log(f"train {job.name} vocab {job.vocab_size} (run {rep + 1}/{job.repeats})")
                job.runs.append(self._run_training(job, spec))
        rows = [job.summary() for job in jobs]
        return rows, self._merge_agreement(models, agreement_files)

    def _run_training(self, job: TrainJob, spec: dict[str, Any]) -> ChildRun:
        if not job.cli:
            return run_child(child_command(spec), env=job.env, cwd=REPO_ROOT)
        command = [
            sys.executable,
            "-m",
            "bpetite",
            "train",
            "--input",
            str(self.corpus_path),
            "--vocab-size",
            str(job.vocab_size),
            "--output",
            str(self.scratch / f"cli-{job.vocab_size}.json"),
            "--force",
        ]
        run = run_child(command, env=job.env, cwd=self.scratch)
        summary = run.report
        run.report.update(
            seconds=summary["elapsed_ms"] / 1000,
            merges=summary["actual_mergeable_vocab_size"] - 256,
            phases={name: summary[f"{name}_ms"] / 1000 for name in ("count", "merge")},
        )
        return run

    def _merge_agreement(
        self, models: dict[int, Path], files: dict[str, Path]
    ) -> dict[str, dict[str, Any]]:
        """Naive merges must equal bpetite's exactly; HF's may differ in tie-breaking."""
        agreement: dict[str, dict[str, Any]] = {}
        for key, path in files.items():
            name, vocab = key.rsplit("-", 1)
            tokenizer = Tokenizer.load(str(models[int(vocab)]))
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if name == "naive":
                naive = [(int(left), int(right)) for left, right in loaded]
                agreement[key] = {
                    "identical": naive == list(tokenizer.merges),
                    "merges": len(naive),
                }
            else:
                vocab_bytes = tokenizer.vocab
                ours = [(vocab_bytes[left], vocab_bytes[right]) for left, right in tokenizer.merges]
                theirs = [(bytes.fromhex(left), bytes.fromhex(right)) for left, right in loaded]
                agreement[key] = _rust.compare_merges(ours, theirs)
        return agreement

    # Multi-file -----------------------------------------------------------------------

    def multi_file(self, models: dict[int, Path]) -> dict[str, Any]:
        """``train_files`` on the corpus as one file, and cut into files (1 and N workers).

        The one-file run must give exactly ``Tokenizer.train``'s merges; the cut corpus
        must give the merges of training on the pieces' combined chunk counts (no
        chunk spans two files). Both are checked, not assumed.
        """
        plan = self.plan
        vocab_size = plan.model_vocab
        pieces = split_corpus(self.corpus, plan.files_split, self.scratch / "split")
        cpus = available_cpus()
        configurations = [([self.corpus_path], 1)] + [(pieces, w) for w in sorted({1, cpus})]
        jobs = [
            TrainJob(
                _files_label(len(files), workers),
                vocab_size,
                plan.cli_repeats,
                {"job": "files", "workers": workers, "corpus": [str(path) for path in files]},
            )
            for files, workers in configurations
        ]
        merges_files: list[Path] = []
        for rep in range(plan.cli_repeats):
            for index, job in enumerate(jobs):
                spec = {**job.spec, "vocab_size": vocab_size}
                if rep == 0:
                    merges_files.append(self.scratch / f"merges-files-{index}.json")
                    spec["merges_out"] = str(merges_files[-1])
                log(f"{job.name} vocab {vocab_size} (run {rep + 1}/{job.repeats})")
                job.runs.append(run_child(child_command(spec), cwd=REPO_ROOT))

        def merges_of(path: Path) -> list[tuple[int, int]]:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            return [(int(left), int(right)) for left, right in loaded]

        whole = list(Tokenizer.load(str(models[vocab_size])).merges)
        texts = [path.read_text(encoding="utf-8") for path in pieces]
        expected_pieces = list(Tokenizer.train_from_counts(count_chunks(texts), vocab_size).merges)
        checks = {
            "one_file_equals_Tokenizer_train": merges_of(merges_files[0]) == whole,
            "pieces_equal_training_on_their_chunk_counts": all(
                merges_of(path) == expected_pieces for path in merges_files[1:]
            ),
        }
        for check, ok in checks.items():
            if not ok:
                self.notes.append(f"CHECK FAILED: multi-file {check}.")
        return {
            "files": len(pieces),
            "checks": checks,
            "rows": [job.summary() for job in jobs],
        }

    # Encoding -------------------------------------------------------------------------

    def encoding(self, models: dict[int, Path]) -> dict[str, Any]:
        plan = self.plan
        loaded = {
            vocab: _encode.Model.from_tokenizer(vocab, Tokenizer.load(str(path)))
            for vocab, path in models.items()
        }
        model = loaded[plan.model_vocab]
        section: dict[str, Any] = {
            "model_vocab_size": plan.model_vocab,
            "mergeable_vocab_size": model.special_id,
            "sentence_words": _encode.SENTENCE_WORDS,
        }
        sentence: dict[str, Any] = {}
        for vocab in sorted({512, plan.model_vocab}):
            log(f"encode: 50-word sentence, vocab {vocab}, {plan.sentence_runs} runs each")
            stats = _encode.sentence_latency(loaded[vocab], plan.sentence_runs)
            sentence[str(vocab)] = {name: latency(stat) for name, stat in stats.items()}
        log("encode: 50-word sentence with the naive rank-pass encoder, vocab 512")
        naive = _encode.naive_sentence_latency(loaded[512].merges, plan.naive_sentence_runs)
        sentence["naive-512"] = {"naive": latency(naive)}
        section["sentence"] = sentence

        log(f"encode: whole corpus, {plan.text_repeats} repeats")
        text = _encode.whole_text(
            model,
            self.corpus,
            plan.text_repeats,
            str(models[plan.model_vocab]),
            # HF's encoder is context only and slow here: a few seconds a repeat.
            with_hf=not plan.quick,
        )
        size = len(self.corpus.encode("utf-8"))
        section["text"] = {
            "bytes": size,
            "tokens": text.tokens,
            "checks": text.checks,
            "stats": {
                name: {**stat.to_json(), "mb_per_s": size / stat.median / 1e6}
                for name, stat in text.stats.items()
            },
        }
        for check, ok in text.checks.items():
            if not ok:
                self.notes.append(f"CHECK FAILED: {check} on the whole corpus.")

        log(
            f"encode: multilingual text, own {MULTILINGUAL_VOCAB} model, "
            f"{plan.text_repeats} repeats"
        )
        multilingual = _encode.multilingual_text(self.corpus)
        multilingual_model = _encode.Model.from_tokenizer(
            MULTILINGUAL_VOCAB, Tokenizer.train(multilingual, MULTILINGUAL_VOCAB)
        )
        mixed = _encode.whole_text(
            multilingual_model, multilingual, plan.text_repeats, None, with_hf=False
        )
        size = len(multilingual.encode("utf-8"))
        section["multilingual"] = {
            "bytes": size,
            "tokens": mixed.tokens,
            "checks": mixed.checks,
            "stats": {
                name: {**stat.to_json(), "mb_per_s": size / stat.median / 1e6}
                for name, stat in mixed.stats.items()
            },
        }
        for check, ok in mixed.checks.items():
            if not ok:
                self.notes.append(f"CHECK FAILED: {check} on the multilingual text.")

        log(f"encode: long single chunk {plan.long_sizes}")
        letters = _encode.corpus_letters(self.corpus)
        long = _encode.long_chunk(model, letters, plan.long_sizes, plan.long_repeats)
        section["long_chunk"] = {
            "sizes": list(plan.long_sizes),
            "stats": {name: stat.to_json() for name, stat in long.items()},
        }
        return section


@dataclass(slots=True)
class TrainJob:
    """One training configuration and the child runs measured for it."""

    name: str
    vocab_size: int
    repeats: int
    spec: dict[str, Any]
    env: dict[str, str] | None = None
    cli: bool = False
    runs: list[ChildRun] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        runs = self.runs
        trainer = Stat(tuple(run.report["seconds"] for run in runs))
        wall = Stat(tuple(run.wall_seconds for run in runs))
        rss = Stat(tuple(float(run.peak_rss_bytes) for run in runs))
        cpu = Stat(tuple(run.cpu_seconds / run.wall_seconds for run in runs))
        row: dict[str, Any] = {
            "id": f"{self.name}-{self.vocab_size}",
            "implementation": self.name,
            "vocab_size": self.vocab_size,
            "merges": runs[0].report["merges"],
            "trainer_seconds": trainer.to_json(),
            "process_wall_seconds": wall.to_json(),
            "peak_rss_bytes": rss.to_json(),
            "cpu_per_wall": cpu.median,
        }
        if "rss_before_bytes" in runs[0].report:
            row["rss_before_bytes"] = Stat(
                tuple(float(run.report["rss_before_bytes"]) for run in runs)
            ).median
        phase_names = runs[0].report.get("phases") or {}
        if phase_names:
            row["phases_seconds"] = {
                phase: Stat(tuple(run.report["phases"][phase] for run in runs)).median
                for phase in phase_names
            }
        if self.name.startswith("hf"):
            row["threads"] = _rust.hf_threads_note() if not self.env else "RAYON_NUM_THREADS=1"
        return row


def _files_label(files: int, workers: int) -> str:
    return (
        f"train_files, {files} file{'s' if files > 1 else ''}, "
        f"{workers} worker{'s' if workers > 1 else ''}"
    )


def latency(stat: Stat) -> dict[str, Any]:
    return {**stat.to_json(), "p50": stat.median, "p99": stat.percentile(99)}


def split_corpus(text: str, parts: int, directory: Path) -> list[Path]:
    """Write `text` as `parts` files cut at line ends, roughly equal in size."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = text.splitlines(keepends=True)
    per_part = -(-len(lines) // parts)
    paths = []
    for index in range(parts):
        path = directory / f"part-{index:02d}.txt"
        path.write_text("".join(lines[index * per_part : (index + 1) * per_part]), encoding="utf-8")
        paths.append(path)
    return paths


def available_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_info() -> dict[str, Any]:
    """The facts a reader needs to compare these figures with their own."""

    def version(package: str) -> str | None:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    return {
        "cpu_model": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "available_cpus": available_cpus(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "packages": {name: version(name) for name in ("bpetite", "tiktoken", "tokenizers")},
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty_src": bool(_git("status", "--porcelain", "--", "src")),
        "date_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "load_average_start": _load_average(),
    }


def _cpu_model() -> str:
    if shutil.which("lscpu"):
        listing = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in listing.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, check=True, cwd=REPO_ROOT
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def _load_average() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


# Ratios and targets -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """A bound a ratio should meet: ``value <op> bound``."""

    op: str
    bound: float

    def met(self, value: float) -> bool:
        checks: dict[str, Callable[[float, float], bool]] = {
            "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b,
            ">=": lambda a, b: a >= b,
        }
        return checks[self.op](value, self.bound)

    def __str__(self) -> str:
        return f"{self.op.replace('<=', '≤').replace('>=', '≥')} {self.bound:g}"


def ratios(results: dict[str, Any], plan: Plan) -> list[dict[str, Any]]:
    """Every same-run ratio the issues ask for, with its target when it has one.

    ``value`` is the ratio of the medians, as the issues ask. ``paired`` is the median
    of the per-repeat ratios where both sides have one sample per repeat: the sides
    of a pair ran back to back, so a slow stretch of a shared machine slows both and
    cancels out. Where the two disagree about a target, the run was noisy.
    """
    training = {row["id"]: row for row in results["training"]}
    encoding = results["encoding"]
    text = encoding["text"]["stats"]
    sentence = encoding["sentence"]
    big = plan.model_vocab
    rows: list[dict[str, Any]] = []
    Sample = dict[str, Any] | None

    def add(
        name: str,
        top: Sample,
        bottom: Sample,
        target: Target | None,
        source: str,
        how: str = "",
        *,
        center: str = "median",
    ) -> None:
        value = paired = None
        if top is not None and bottom is not None:
            value = top[center] / bottom[center]
            paired = value
            tops, bottoms = top["samples"], bottom["samples"]
            if center == "median" and len(tops) == len(bottoms) > 1:
                paired = statistics.median(a / b for a, b in zip(tops, bottoms, strict=True))
        add_value(name, value, target, source, how, paired=paired)

    def add_value(
        name: str,
        value: float | None,
        target: Target | None,
        source: str,
        how: str = "",
        *,
        paired: float | None = None,
    ) -> None:
        paired = value if paired is None else paired
        rows.append(
            {
                "name": name,
                "value": value,
                "paired": paired,
                "target": str(target) if target else None,
                "met": None if value is None or target is None else target.met(value),
                "met_paired": None if paired is None or target is None else target.met(paired),
                "source": source,
                "how": how,
            }
        )

    def trained(key: str, column: str = "trainer_seconds") -> Sample:
        row = training.get(key)
        return None if row is None else dict(row[column])

    naive_vocab = plan.naive_vocab
    naive = trained(f"naive-{naive_vocab}")
    bp_big = trained(f"bpetite-{big}")
    add(
        f"Training {naive_vocab}: naive time / bpetite time",
        naive,
        trained(f"bpetite-{naive_vocab}"),
        Target(">=", 10) if naive_vocab == 512 else None,
        "training target",
        "trainer times, same corpus string",
    )
    if big != 512 and naive_vocab == 512:
        add(
            f"Training {big}: bpetite time / naive 512 time",
            bp_big,
            naive,
            Target("<", 0.5),
            "training target",
        )
    if big != 512:
        rss = trained(f"bpetite-{big}", "peak_rss_bytes")
        add_value(
            f"Training {big}: bpetite peak RSS (MB)",
            None if rss is None else rss["median"] / 1e6,
            Target("<", 300),
            "training target",
            "whole child process: interpreter, imports, corpus and training",
        )
    for vocab in plan.vocab_sizes:
        add(
            f"Training {vocab}: bpetite time / HF tokenizers time",
            trained(f"bpetite-{vocab}"),
            trained(f"hf-{vocab}"),
            Target("<=", 1.5) if vocab == 32000 else None,
            "benchmark target",
            "HF with its default thread pool",
        )
    add(
        f"Training {big}: bpetite time / HF tokenizers on 1 thread",
        bp_big,
        trained(f"hf-1-thread-{big}"),
        None,
        "context",
    )
    for row in results["multi_file"].get("rows", []):
        add(
            f"Training {big}: {row['implementation']} / `Tokenizer.train` (time)",
            row["trainer_seconds"],
            bp_big,
            None,
            "scaling target",
            "the first includes reading the files",
        )
    bp512 = trained("bpetite-512")
    add_value(
        "Training 512: bpetite trainer time (s)",
        None if bp512 is None else bp512["median"],
        Target("<=", 60),
        "spec",
    )
    cli512 = trained("cli-512", "process_wall_seconds")
    add_value(
        "Training 512: `bpetite train` whole-command wall time (s)",
        None if cli512 is None else cli512["median"],
        Target("<=", 60),
        "spec",
    )
    warm, cold = text.get("bpetite_warm"), text.get("bpetite_cold")
    tt_warm, regex_pass = text.get("tiktoken_warm"), text.get("regex")
    add(
        "Whole text warm: bpetite speed / tiktoken speed",
        tt_warm,
        warm,
        Target(">=", 1.0),
        "speed target",
        "tiktoken's steady (warm) speed, same merges",
    )
    add(
        "Whole text cold: bpetite speed / tiktoken cold speed",
        text.get("tiktoken_cold"),
        cold,
        Target(">=", 0.6),
        "speed target",
        "both on a freshly built encoder",
    )
    add(
        "Whole text: bare regex pass speed / tiktoken speed",
        tt_warm,
        regex_pass,
        None,
        "context",
        "`regex` with the Unicode pattern; bpetite runs the ASCII twin on ASCII text",
    )
    add(
        "Whole text: bpetite's split speed / tiktoken speed",
        tt_warm,
        text.get("split"),
        None,
        "context",
        "`split_pattern.split`: the ceiling of any encoder that runs it",
    )
    add(
        "Whole text cold: bpetite speed / tiktoken speed",
        tt_warm,
        cold,
        Target(">=", 0.35),
        "benchmark target",
        "against tiktoken's steady (warm) speed",
    )
    add(
        "Whole text warm: bpetite time / bare regex pass",
        warm,
        regex_pass,
        Target("<=", 1.3),
        "benchmark target (encoder: ≤ 1.5)",
    )
    add("Whole text cold: bpetite time / bare regex pass", cold, regex_pass, None, "")
    add(
        "Whole text warm: bpetite speed / HF tokenizers speed",
        text.get("hf_warm"),
        warm,
        None,
        "context",
    )
    mixed = encoding.get("multilingual", {}).get("stats", {})
    for state in ("warm", "cold"):
        add(
            f"Multilingual text {state}: bpetite speed / tiktoken {state} speed",
            mixed.get(f"tiktoken_{state}"),
            mixed.get(f"bpetite_{state}"),
            Target(">=", 0.6),
            "speed target",
            "own 5k model; cold: both on a freshly built encoder",
        )
    model_sentence = sentence.get(str(big), {})
    for state in ("warm", "cold"):
        add(
            f"50-word sentence, vocab {big}, {state}: bpetite p50 / tiktoken p50",
            model_sentence.get(f"bpetite_{state}"),
            model_sentence.get("tiktoken" if state == "warm" else "tiktoken_cold"),
            Target("<=", 1.25),
            "speed target",
            "steady state, no gc.collect() between calls; cold: first call on a fresh encoder",
            center="p50",
        )
    add(
        f"50-word sentence: naive rank-pass (512) p50 / bpetite {big} cold p50",
        sentence.get("naive-512", {}).get("naive"),
        sentence.get(str(big), {}).get("bpetite_cold"),
        Target(">=", 20) if big == 32000 else None,
        "encoder target",
        "cold = first encode on a fresh tokenizer",
        center="p50",
    )
    for vocab in sorted(int(key) for key in sentence if key.isdigit()):
        for state in ("cold", "warm"):
            p99 = sentence[str(vocab)][f"bpetite_{state}"]["p99"]
            add_value(
                f"50-word sentence, vocab {vocab}, {state}: p99 (ms)",
                p99 * 1000,
                Target("<", 100),
                "spec",
            )
    long = encoding["long_chunk"]["stats"]
    sizes = encoding["long_chunk"]["sizes"]
    for smaller, larger in itertools.pairwise(sizes):
        add(
            f"Long chunk: bpetite time {larger // 1000}k / {smaller // 1000}k letters",
            long.get(f"bpetite_{larger}"),
            long.get(f"bpetite_{smaller}"),
            Target("<=", 2.5) if (smaller, larger) == (100_000, 200_000) else None,
            "encoder target",
        )
    return rows
