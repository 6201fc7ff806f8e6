"""The benchmark harness's plumbing, never its figures: those are measured, not asserted.

`.ci/run` runs the quick suite end to end; these cheap checks pin the pieces whose
mistakes would silently skew every figure or hide a wrong result: the percentile rule,
the interleaved rounds, the merges recovered from a peer's ranks, the pieces fed to
bpe-openai, a failed check failing the run (exit 1), the target rows, the corpus
selection, the docs page, and the commands' usage contract.
"""

import dataclasses
import gc
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from unittest.mock import patch

import pytest

from benchmarks import harness, peers, web_corpus
from benchmarks.big_corpus import build_corpus, select_sources
from benchmarks.harness import Section, Stat
from bpetite import PRESETS, Tokenizer

ROOT = Path(__file__).resolve().parents[2]
RUN_PY = ROOT / "benchmarks" / "run.py"


def test_both_commands_list_their_options() -> None:
    for command in ([str(RUN_PY)], ["-m", "benchmarks"]):
        result = subprocess.run(
            [sys.executable, *command, "--help"], capture_output=True, text=True, cwd=ROOT
        )
        assert result.returncode == 0, result.stderr
        for flag in ("--quick", "--output", "--write-docs", "--only", "--skip", "--profile"):
            assert flag in result.stdout


def test_missing_corpus_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.txt"
    command = [sys.executable, str(RUN_PY), "--quick", "--corpus", str(missing)]
    result = subprocess.run([*command, "--output", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 1
    assert "TinyShakespeare not found" in result.stderr
    assert not (tmp_path / "results.json").exists()


def test_p99_of_100_samples_is_the_second_largest() -> None:
    """Nearest rank: ceil(0.99 * 100) = 99th smallest, so one outlier cannot set p99."""
    stat = Stat(tuple(float(value) for value in range(1, 101)))
    assert (stat.percentile(99), stat.percentile(50), stat.median) == (99.0, 50.0, 50.5)
    assert harness.spread(Stat((0.002, 0.001, 0.0035))) == "2 ms (1 ms–3.5 ms)"


def test_measure_interleaves_the_cases_and_keeps_what_was_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    # The full collection before each call, recorded rather than run (in the test
    # process, whose heap is large, each would take a good part of a second).
    monkeypatch.setattr(gc, "collect", lambda: calls.append("collect"))

    def case(name: str) -> Callable[[], str]:
        def call() -> str:
            calls.append(name)
            return name

        return call

    cases = {name: case(name) for name in ("a", "b")}
    timings = harness.measure(cases, 3, setup=lambda: calls.append("setup"))
    assert calls == ["setup", "collect", "a", "collect", "b"] * 3
    assert [len(timing.stat.samples) for timing in timings.values()] == [3, 3]
    assert timings["a"].results == ["a"]
    assert harness.measure(cases, 2, keep="all")["b"].results == ["b", "b"]
    assert harness.measure(cases, 2, keep="none")["b"].results == []
    calls.clear()
    harness.measure(cases, 2, steady=True)
    assert calls == ["a", "b"] * 2  # steady: no collection between the calls


def test_a_child_reports_its_json_and_its_failure_with_stderr() -> None:
    code = "import json, sys; print('noise'); print(json.dumps({'seconds': 1.5}))"
    child = harness.run_child([sys.executable, "-c", code])
    assert child.report == {"seconds": 1.5} and child.peak_rss > 0
    failing = [sys.executable, "-c", "import sys; sys.exit('it broke')"]
    with pytest.raises(RuntimeError, match="it broke"):
        harness.run_child(failing)


def test_a_childs_process_tree_is_sampled_only_when_asked() -> None:
    """Sampling the tree walks every process's page tables, so timed runs leave it out."""
    code = "import json, time; time.sleep(0.3); print(json.dumps({}))"
    plain = harness.run_child([sys.executable, "-c", code])
    assert plain.tree_pss is None and plain.peak_rss > 0
    sampled = harness.run_child([sys.executable, "-c", code], sample_tree=True)
    if sys.platform == "linux":
        assert sampled.tree_pss is not None and sampled.tree_pss > 0


def test_a_training_in_a_child_reports_its_time_phases_and_merges(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("ab ab ab ab\n", encoding="utf-8")
    train = peers.train_in_child
    child = harness.call_in_child(train, trainer="bpetite", vocab_size=258, paths=[str(corpus)])
    trained = peers.Trained.of(harness.Timing(Stat((1.0,)), [child]))
    assert trained.merges == peers.byte_pairs(Tokenizer.train("ab ab ab ab\n", 258).merges)
    assert set(trained.phases) == {"count", "merge", "build"}
    assert trained.peak_rss > 0 and trained.tree_pss is None
    # A run of its own for the memory: its figures, the timed rounds' for the rest.
    memory = harness.Child(child.report, 0.0, 123, 456)
    watched = peers.Trained.of(harness.Timing(Stat((1.0,)), [child]), memory)
    assert watched.peak_rss == 123 and watched.tree_pss == Stat((456.0,))
    assert watched.seconds == trained.seconds and watched.merges == trained.merges


def test_a_failed_check_fails_the_run_and_a_missed_target_does_not(tmp_path: Path) -> None:
    """Exit 1 on wrong ids or merges whatever the timings; a timing never fails the run."""

    def missed_target(run: harness.Run) -> Section:
        section = Section("targets")
        section.ratio("slow", Stat((2.0,)), Stat((1.0,)), "<= 1")
        return section

    def wrong_ids(run: harness.Run) -> Section:
        section = Section("ids")
        section.check("ids equal the reference's", False)
        return section

    def crashed(run: harness.Run) -> Section:
        raise RuntimeError("the section broke")

    def profile(text: str, output: Path) -> None:
        raise AssertionError("not profiling")

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a tiny corpus\n", encoding="utf-8")
    argv = ["--quick", "--corpus", str(corpus), "--output", str(tmp_path)]
    assert harness.main(argv, {"targets": missed_target}, profile) == 0
    results = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "| slow | ≤ 1 | 2 | 2 | **no** |" in results
    assert harness.main(argv, {"targets": missed_target, "ids": wrong_ids}, profile) == 1
    results = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "- ids: ids equal the reference's" in results
    assert harness.main(argv, {"crashed": crashed}, profile) == 1


def test_target_rows_keep_their_place_without_figures_and_pair_the_rounds() -> None:
    section = Section("s")
    rows = [
        ("{name}: a / b", "a", "b", ">= 1", "how {name}", "speed target"),
        ("{name}: a / c", "a", "c", "", "", "context"),
    ]
    section.ratios(rows, {"a": Stat((1.0, 4.0, 9.0)), "b": Stat((2.0, 2.0, 3.0))}, name="x")
    first, second = section.targets
    assert (first.measure, first.how, first.value, first.paired) == ("x: a / b", "how x", 2.0, 2.0)
    assert first.met is True
    assert (second.value, second.met) == (None, None)


def _bytes_then(*tokens: bytes) -> list[bytes]:
    return [bytes([byte]) for byte in range(256)] + list(tokens)


def test_pairs_from_tokens_recovers_the_merge_of_each_token() -> None:
    """`abc` after `bc` must split as a + bc: the lower-ranked pair merges first."""
    tokens = _bytes_then(b"bc", b"ab", b"abc")
    assert peers.pairs_from_tokens(tokens) == [(b"b", b"c"), (b"a", b"b"), (b"a", b"bc")]
    with pytest.raises(ValueError, match="not one merge of two tokens"):
        peers.pairs_from_tokens(_bytes_then(b"abc"))


def test_pairs_from_tokens_agrees_with_bpetite_on_a_trained_model() -> None:
    """An independent check: bpetite's own merges, spelled as bytes, are recovered exactly."""
    tokenizer = Tokenizer.train("the cat sat on the mat with the hat " * 20, 300)
    tokens = [tokenizer.vocab[i] for i in range(tokenizer.mergeable_vocab_size)]
    assert peers.pairs_from_tokens(tokens) == peers.byte_pairs(tokenizer.merges)


def test_compare_merges_reports_the_first_difference_and_a_shorter_list() -> None:
    ours = [(b"a", b"b"), (b"c", b"d")]
    assert peers.compare_merges(ours, list(ours)) == "identical"
    differ = peers.compare_merges(ours, [(b"a", b"b"), (b"d", b"c")])
    assert differ == "first difference at merge 1 (bpetite b'c' + b'd', theirs b'd' + b'c')"
    shorter = peers.compare_merges(ours, ours[:1])
    assert shorter == "first difference at merge 1 (bpetite b'c' + b'd', theirs the end)"


def test_hf_merges_are_read_back_as_bpetite_bytes() -> None:
    """HF writes merges in GPT-2's printable alphabet; a wrong table would differ everywhere."""
    text = "the cat sat on the mat\n with the hat " * 20
    hf = peers.TRAINERS["hf"]
    pairs = hf.merges(hf.train([text], 270, PRESETS["gpt2"]))
    assert pairs[0] in peers.byte_pairs(Tokenizer.train(text, 270).merges)


def test_pieces_cut_at_line_ends_within_the_byte_limit() -> None:
    text = "".join(f"line {index} é\n" for index in range(1000)) + "no newline at the end"
    cut = peers.pieces(text, max_bytes=500)
    assert "".join(cut) == text
    assert all(len(piece.encode("utf-8")) <= 500 for piece in cut)
    assert all(piece.endswith("\n") for piece in cut[:-1])
    with pytest.raises(ValueError, match="longer than a piece"):
        peers.pieces("x" * 501, max_bytes=500)


def test_big_corpus_selection_is_a_sorted_utf8_prefix_within_the_limit() -> None:
    small = list(select_sources(300_000))
    larger = list(select_sources(600_000))
    assert small and larger[: len(small)] == small
    assert sum(len(data) for _, data in larger) <= 600_000
    for _, data in larger:
        data.decode("utf-8")


def test_big_corpus_refuses_a_cache_inside_the_repository() -> None:
    with pytest.raises(ValueError, match="inside the repository"):
        build_corpus(0.1, ROOT / "benchmarks" / "corpus-cache")


def test_docs_regenerate_the_figures_and_keep_the_prose_around_them(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    old = f"# Benchmarks\n\nHow to run.\n\n{harness.BEGIN}\nold figures\n{harness.END}\n\nNotes.\n"
    page.write_text(old, encoding="utf-8")
    harness.write_docs("# results\n\n## The machine\n\nnew figures\n", page)
    text = page.read_text(encoding="utf-8")
    assert "old figures" not in text
    assert text.count("How to run.") == text.count("Notes.") == text.count("new figures") == 1
    order = ["How to run.", harness.BEGIN, "new figures", harness.END, "Notes."]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)
    harness.write_docs("# results\n\nnew figures\n", page)
    assert page.read_text(encoding="utf-8") == text.replace("## The machine\n\n", "")
    fresh = tmp_path / "fresh.md"
    harness.write_docs("# results\n\nfigures\n", fresh)
    assert fresh.read_text(encoding="utf-8").startswith(f"# Benchmarks\n\n{harness.BEGIN}")


def test_measure_can_alternate_the_order_of_its_rounds() -> None:
    calls: list[str] = []
    cases = {name: (lambda name=name: calls.append(name)) for name in ("a", "b")}
    harness.measure(cases, 3, alternate=True, keep="none", steady=True)
    assert calls == ["a", "b", "b", "a", "a", "b"]


def test_a_full_only_section_is_left_out_of_quick_unless_named(tmp_path: Path) -> None:
    ran: list[str] = []

    def section(name: str) -> Callable[[harness.Run], Section]:
        def measure(run: harness.Run) -> Section:
            ran.append(name)
            return Section(name)

        return measure

    def profile(text: str, output: Path) -> None:
        raise AssertionError("not profiling")

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a tiny corpus\n", encoding="utf-8")
    sections = {"small": section("small"), "huge": section("huge")}
    argv = ["--quick", "--corpus", str(corpus), "--output", str(tmp_path)]
    assert harness.main(argv, sections, profile, full_only=("huge",)) == 0
    assert harness.main([*argv, "--only", "huge"], sections, profile, full_only=("huge",)) == 0
    assert harness.main(argv[1:], sections, profile, full_only=("huge",)) == 0
    assert ran == ["small", "huge", "small", "huge"]


def test_the_web_corpus_keeps_only_text_both_trainers_split_alike() -> None:
    assert web_corpus.plain_text("plain é 中 😀".encode()) == "plain é 中 😀"
    assert web_corpus.plain_text(b"a\0b") is None
    assert web_corpus.plain_text(b"\xff") is None
    assert web_corpus.plain_text("x\U0001fae8".encode()) is None  # assigned in Unicode 15
    assert web_corpus.plain_text("\ue000".encode()) is None  # private use


def test_the_generated_web_text_is_the_same_for_a_seed_and_in_old_code_points() -> None:
    """Small lexicons, so the test is quick; every character from Unicode 6 or earlier."""
    small = [dataclasses.replace(lang, words=2000) for lang in web_corpus.LANGUAGES]
    with patch.object(web_corpus, "LANGUAGES", tuple(small)):
        first = [web_corpus.Generator(7).document() for _ in range(1)]
        again = web_corpus.Generator(7)
        documents = [again.document() for _ in range(30)]
    assert documents[0] == first[0]
    text = "".join(documents)
    assert all(unicodedata.category(char) != "Cn" for char in set(text))
    assert max(map(ord, text)) < 0x1F650 and "\r\n" in text
    scripts = {unicodedata.name(char).split()[0] for char in set(text) if char.isalpha()}
    assert {"LATIN", "CYRILLIC", "GREEK", "CJK"} <= scripts


def test_the_web_corpus_refuses_a_directory_inside_the_repository() -> None:
    with pytest.raises(ValueError, match="inside the repository"):
        web_corpus.build(ROOT / "benchmarks" / "web", 1000, seed=0, roots=[])


def test_the_web_corpus_is_written_as_text_files_and_parquet_rows(tmp_path: Path) -> None:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    source = tmp_path / "machine"
    source.mkdir()
    (source / "a.txt").write_text("hello machine\n", encoding="utf-8")
    (source / "b.bin").write_bytes(b"\0binary")
    small = [dataclasses.replace(lang, words=500) for lang in web_corpus.LANGUAGES]
    with patch.object(web_corpus, "LANGUAGES", tuple(small)):
        manifest = web_corpus.build(tmp_path / "corpus", 60_000, seed=1, roots=[source])
        again = web_corpus.build(tmp_path / "corpus", 60_000, seed=1, roots=[source])
    assert again == manifest
    files = sorted(p for p in (tmp_path / "corpus" / "text").rglob("*") if p.is_file())
    texts = [path.read_text(encoding="utf-8") for path in files]
    assert "hello machine\n" in texts and len(texts) > 2  # the binary file is left out
    assert all("\0" not in text for text in texts)
    rows = pq.read_table(tmp_path / "corpus" / "parquet" / "shard_00000.parquet")
    assert sorted(rows.column("text").to_pylist()) == sorted(texts)
    assert manifest["bytes"] == sum(len(t.encode("utf-8")) for t in texts) <= 60_000
