"""count_chat_tokens: OpenAI's published estimate of a chat conversation's prompt tokens.

The rule is the openai-cookbook's ``num_tokens_from_messages`` ("How to count tokens
with tiktoken"): 3 tokens per message, the tokens of every value of every message (its
role, its content, its name...), 1 more per ``name``, and 3 for the reply's priming
(``<|start|>assistant<|message|>``). The cookbook itself calls the result an estimate:
the API's own count may differ from model to model, and function definitions, images
and tool calls add tokens this rule does not see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from bpetite import Tokenizer, encoding_name_for_model, get_encoding, list_encoding_names
from bpetite.chat._messages import checked_messages, required_text
from bpetite.errors import ParameterError

TOKENS_PER_MESSAGE: Final = 3
TOKENS_PER_NAME: Final = 1
#: Every reply is primed with ``<|start|>assistant<|message|>``.
REPLY_PRIMING: Final = 3


def count_chat_tokens(
    messages: Sequence[Mapping[str, str]], model: str | Tokenizer = "gpt-4o"
) -> int:
    """Estimate the prompt tokens of `messages` in OpenAI's chat API, by OpenAI's rule.

    `model` is an OpenAI chat model's name (``"gpt-4o"``, ``"gpt-4-0613"``: its
    encoding is tiktoken's for it), a built-in encoding's name (``"cl100k_base"``), or a
    :class:`~bpetite.Tokenizer`. Every value of every message must be text; the text of
    a special token counts as ordinary text, as the API reads a message. The rule, and
    why it is an estimate, is this module's docstring.

    >>> count_chat_tokens([{"role": "user", "content": "Hello!"}], "cl100k_base")
    9
    """
    tokenizer = _tokenizer_for(model)
    total = 0
    for index, message in enumerate(checked_messages(messages)):
        total += TOKENS_PER_MESSAGE
        for key in message:
            if not isinstance(key, str):
                raise ParameterError(f"message {index} has a key that is not text: {key!r}")
            value = required_text(message, index, key)
            total += tokenizer.count_tokens(value, allowed_special=set(), disallowed_special=())
            if key == "name":
                total += TOKENS_PER_NAME
    return total + REPLY_PRIMING


def _tokenizer_for(model: str | Tokenizer) -> Tokenizer:
    if isinstance(model, Tokenizer):
        return model
    if not isinstance(model, str):
        raise TypeError(f"model must be a model or encoding name, or a Tokenizer, got {model!r}")
    if model in list_encoding_names():
        return get_encoding(model)
    try:
        name = encoding_name_for_model(model)
    except KeyError:
        raise ParameterError(
            f"unknown model {model!r}: give an OpenAI chat model (gpt-4o, gpt-4, "
            f"gpt-3.5-turbo...), an encoding ({', '.join(list_encoding_names())}) or a Tokenizer"
        ) from None
    return get_encoding(name)
