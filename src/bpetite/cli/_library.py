"""What the command line needs from bpetite beyond its public API, in one place.

Command modules import from ``bpetite`` and from the CLI's helper modules only; the
pieces of the core that are not public yet (streaming over blocks, parallel file
counting, counts files, the token renderings) come through here, so the gap between
the public API and what the CLI uses is this one list.
"""

from bpetite._counting import count_expanded, expand_inputs
from bpetite._counts_file import load_counts, save_counts
from bpetite._streaming import (
    DEFAULT_BLOCK_SIZE,
    check_specials,
    count_pieces,
    decode_blocks,
    encode_pieces,
    read_blocks,
)
from bpetite._visualize import (
    PALETTE,
    PARTIAL_BACKGROUNDS,
    SPECIAL_BACKGROUNDS,
    TokenPiece,
    corpus_stats,
    make_piece,
    partial_label,
    render_html,
    render_plain,
    summarize,
    token_pieces,
    visible,
    vocabulary_stats,
)

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "PALETTE",
    "PARTIAL_BACKGROUNDS",
    "SPECIAL_BACKGROUNDS",
    "TokenPiece",
    "check_specials",
    "corpus_stats",
    "count_expanded",
    "count_pieces",
    "decode_blocks",
    "encode_pieces",
    "expand_inputs",
    "load_counts",
    "make_piece",
    "partial_label",
    "read_blocks",
    "render_html",
    "render_plain",
    "save_counts",
    "summarize",
    "token_pieces",
    "visible",
    "vocabulary_stats",
]
