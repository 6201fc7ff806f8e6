"""Hypothesis strategies shared by the tests: texts that stress BPE and merge lists."""

from hypothesis import strategies as st

# Few distinct characters make repeated pairs, ties and overlapping runs likely.
_ALPHABET = st.sampled_from(
    [
        "a", "b", "c", " ", "  ", "\n", "\r\n", "\t", "'", "'s", "'ll", "1", "23",
        "é", "ß", "中", "文", "😀", "👍🏽", "ا", "ل", "!", "?!", ".", "<|endoftext|>", "<|",
    ]
)  # fmt: skip

#: Short texts built from BPE-hostile pieces: runs, ties, contractions, specials, Unicode.
tricky_text = st.lists(_ALPHABET, max_size=40).map("".join)

#: Arbitrary Unicode text without lone surrogates (they are not valid text).
any_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)

#: Either kind.
texts = st.one_of(tricky_text, any_text)


@st.composite
def merge_lists(draw: st.DrawFn, max_merges: int = 24) -> list[tuple[int, int]]:
    """Valid but arbitrary merge lists over a small byte alphabet (not necessarily trained).

    Each merge may combine any earlier token, so duplicate-byte tokens and tokens that
    never encode to themselves occur: exactly what a hand-made artifact may contain.
    """
    alphabet = draw(st.lists(st.sampled_from(b"ab c"), min_size=1, max_size=4, unique=True))
    merges: list[tuple[int, int]] = []
    for rank in range(draw(st.integers(0, max_merges))):
        ids = st.sampled_from([*alphabet, *range(256, 256 + rank)])
        merges.append((draw(ids), draw(ids)))
    return merges
