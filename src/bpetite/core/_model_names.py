"""OpenAI's model names: which built-in vocabulary each model uses, as tiktoken maps them.

``encoding_for_model("gpt-4o")`` is tiktoken's call and gives the same vocabulary
tiktoken gives (``o200k_base``), from the package's files. The tables are tiktoken's
``tiktoken/model.py`` (tiktoken 0.14): an exact name first, then the first prefix, in
the table's order, that the name starts with, so a dated release (``gpt-4o-2024-05-13``)
or a fine-tuned model (``ft:gpt-4o-mini:org::id``) finds its family. The tests check
both tables against the installed tiktoken's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from bpetite.core._builtin import get_encoding
from bpetite.core._errors import UnknownModelError
from bpetite.core._tokenizer import Tokenizer

#: Model name -> the name of its built-in vocabulary.
MODEL_TO_ENCODING: Final[Mapping[str, str]] = MappingProxyType(
    {
        # reasoning
        "o1": "o200k_base",
        "o3": "o200k_base",
        "o4-mini": "o200k_base",
        # chat
        "gpt-5": "o200k_base",
        "gpt-4.1": "o200k_base",
        "gpt-4o": "o200k_base",
        "gpt-4": "cl100k_base",
        "gpt-3.5-turbo": "cl100k_base",
        "gpt-3.5": "cl100k_base",
        "gpt-35-turbo": "cl100k_base",  # Azure's deployment name
        # base
        "davinci-002": "cl100k_base",
        "babbage-002": "cl100k_base",
        # embeddings
        "text-embedding-ada-002": "cl100k_base",
        "text-embedding-3-small": "cl100k_base",
        "text-embedding-3-large": "cl100k_base",
        # text (deprecated)
        "text-davinci-003": "p50k_base",
        "text-davinci-002": "p50k_base",
        "text-davinci-001": "r50k_base",
        "text-curie-001": "r50k_base",
        "text-babbage-001": "r50k_base",
        "text-ada-001": "r50k_base",
        "davinci": "r50k_base",
        "curie": "r50k_base",
        "babbage": "r50k_base",
        "ada": "r50k_base",
        # code (deprecated)
        "code-davinci-002": "p50k_base",
        "code-davinci-001": "p50k_base",
        "code-cushman-002": "p50k_base",
        "code-cushman-001": "p50k_base",
        "davinci-codex": "p50k_base",
        "cushman-codex": "p50k_base",
        # edit (deprecated)
        "text-davinci-edit-001": "p50k_edit",
        "code-davinci-edit-001": "p50k_edit",
        # old embeddings (deprecated)
        "text-similarity-davinci-001": "r50k_base",
        "text-similarity-curie-001": "r50k_base",
        "text-similarity-babbage-001": "r50k_base",
        "text-similarity-ada-001": "r50k_base",
        "text-search-davinci-doc-001": "r50k_base",
        "text-search-curie-doc-001": "r50k_base",
        "text-search-babbage-doc-001": "r50k_base",
        "text-search-ada-doc-001": "r50k_base",
        "code-search-babbage-code-001": "r50k_base",
        "code-search-ada-code-001": "r50k_base",
        # open source
        "gpt2": "gpt2",
        "gpt-2": "gpt2",
    }
)

#: Model name prefix -> vocabulary name, tried in this order after the exact names.
MODEL_PREFIX_TO_ENCODING: Final[Mapping[str, str]] = MappingProxyType(
    {
        "o1-": "o200k_base",
        "o3-": "o200k_base",
        "o4-mini-": "o200k_base",
        # chat
        "gpt-5": "o200k_base",
        "gpt-4.5-": "o200k_base",
        "gpt-4.1-": "o200k_base",
        "chatgpt-4o-": "o200k_base",
        "gpt-4o-": "o200k_base",  # gpt-4o-2024-05-13
        "gpt-4-": "cl100k_base",  # gpt-4-0314, gpt-4-32k
        "gpt-3.5-turbo-": "cl100k_base",  # gpt-3.5-turbo-0301
        "gpt-35-turbo-": "cl100k_base",  # Azure's deployment name
        "gpt-oss-": "o200k_harmony",
        # fine-tuned: ft:<base model>:<organisation>:<suffix>:<id>
        "ft:gpt-4o": "o200k_base",
        "ft:gpt-4": "cl100k_base",
        "ft:gpt-3.5-turbo": "cl100k_base",
        "ft:davinci-002": "cl100k_base",
        "ft:babbage-002": "cl100k_base",
    }
)


def encoding_name_for_model(model_name: str) -> str:
    """The name of the built-in vocabulary `model_name` uses (tiktoken's function).

    An exact name first, then the first prefix it starts with; UnknownModelError (a
    KeyError, as tiktoken raises), with tiktoken's advice, for a name neither knows.

    >>> encoding_name_for_model("gpt-4o-2024-05-13"), encoding_name_for_model("gpt-oss-20b")
    ('o200k_base', 'o200k_harmony')
    """
    if not isinstance(model_name, str):
        raise TypeError(f"model_name must be a str, got {type(model_name).__name__}")
    found = MODEL_TO_ENCODING.get(model_name)
    if found is not None:
        return found
    for prefix, encoding_name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return encoding_name
    raise UnknownModelError(
        f"Could not automatically map {model_name} to a tokeniser. Please use "
        "`bpetite.get_encoding` to explicitly get the tokeniser you expect."
    )


def encoding_for_model(model_name: str) -> Tokenizer:
    """The built-in vocabulary `model_name` uses: ``get_encoding`` of its name.

    >>> encoding_for_model("gpt-4").name
    'cl100k_base'
    """
    return get_encoding(encoding_name_for_model(model_name))
