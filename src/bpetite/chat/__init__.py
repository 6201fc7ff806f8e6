"""Chat: a conversation rendered in a model's chat format, encoded, or counted.

A conversation is a list of messages, each a mapping with a ``"role"`` and a
``"content"``, as Hugging Face and OpenAI's API take them.

* :func:`apply_chat_template` renders one, with Hugging Face's meaning
  (:meth:`bpetite.Tokenizer.apply_chat_template` calls it): a Jinja template renders
  exactly as ``transformers`` renders it, with its environment (jinja2 is the optional
  extra ``bpetite[chat]``, imported only for a Jinja template); ``"harmony"`` is OpenAI's
  gpt-oss format, id for id as ``openai-harmony`` renders text messages, channels
  included; ``"chatml"`` is the ChatML template Hugging Face documents
  (:data:`CHATML_TEMPLATE`).
* :func:`check_chat_template` checks that a Jinja template compiles, with the error
  rendering it would give, for a template stored to be rendered later.
* :func:`count_chat_tokens` estimates what a conversation costs in OpenAI's chat API, by
  the rule OpenAI publishes.

>>> from bpetite import get_encoding
>>> messages = [{"role": "user", "content": "Hi!"}]
>>> tokenizer = get_encoding("cl100k_base").with_special_tokens(["<|im_start|>", "<|im_end|>"])
>>> tokenizer.apply_chat_template(messages, chat_template="chatml", tokenize=False)
'<|im_start|>user\\nHi!<|im_end|>\\n'
>>> count_chat_tokens(messages, "gpt-4")
9
"""

from bpetite.chat._count import count_chat_tokens
from bpetite.chat._jinja import check_chat_template
from bpetite.chat._render import CHATML_TEMPLATE, FORMATS, apply_chat_template

__all__ = [
    "CHATML_TEMPLATE",
    "FORMATS",
    "apply_chat_template",
    "check_chat_template",
    "count_chat_tokens",
]
