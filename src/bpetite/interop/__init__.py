"""Interoperability: export to Hugging Face and tiktoken, import GPT-2 and other vocabularies.

Optional and separate from the :class:`~bpetite.Tokenizer` API: ``import bpetite`` does
not load this package, and it never imports ``tokenizers`` or ``tiktoken`` (the file
formats are written and read here with ``json`` and ``base64``).

>>> from bpetite import InteropError, Tokenizer
>>> from bpetite.interop import export_tiktoken
>>> export_tiktoken(Tokenizer.train("ab ab ab", vocab_size=258)).ranks.splitlines()[-1]
'IGFi 257'

Every conversion is exact or refused with :class:`InteropError`; docs/interop.md
explains how the formats map and why the checks are enough.
"""

from bpetite.errors import InteropError
from bpetite.interop._alphabet import BytePermutation, gpt2_byte_permutation
from bpetite.interop._detect import import_vocabulary
from bpetite.interop._hf import (
    HF_FILES,
    export_hf,
    export_hf_pretrained,
    write_hf,
    write_hf_pretrained,
)
from bpetite.interop._model import IdLayout, ImportFormat, ImportResult
from bpetite.interop._tiktoken import TiktokenExport, export_tiktoken, write_tiktoken

__all__ = [
    "HF_FILES",
    "BytePermutation",
    "IdLayout",
    "ImportFormat",
    "ImportResult",
    "InteropError",
    "TiktokenExport",
    "export_hf",
    "export_hf_pretrained",
    "export_tiktoken",
    "gpt2_byte_permutation",
    "import_vocabulary",
    "write_hf",
    "write_hf_pretrained",
    "write_tiktoken",
]
