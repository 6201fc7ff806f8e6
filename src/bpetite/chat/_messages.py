"""Messages as every format receives them: dicts, None values dropped, text checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bpetite.errors import ParameterError


def checked_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The messages as dicts without their None values, as ``transformers`` has them.

    APIs return ``"content": None`` beside ``tool_calls``; a template handles a missing
    key better than a None, so ``transformers`` drops such keys, and so does this.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise TypeError(
            "messages must be a list of messages (mappings with 'role' and 'content'), "
            f"got {type(messages).__name__}"
        )
    if not messages:
        raise ParameterError("the conversation is empty: give at least one message")
    checked = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TypeError(
                f"message {index} must be a mapping with 'role' and 'content', "
                f"got {type(message).__name__}"
            )
        checked.append({key: value for key, value in message.items() if value is not None})
    return checked


def required_text(message: Mapping[str, Any], index: int, key: str) -> str:
    """`message[key]`, which must be a str."""
    value = optional_text(message, index, key)
    if value is None:
        raise ParameterError(f"message {index} has no {key!r}")
    return value


def optional_text(message: Mapping[str, Any], index: int, key: str) -> str | None:
    """`message[key]` if it is a str, None if it is absent, else ParameterError."""
    value = message.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ParameterError(
        f"message {index}'s {key!r} must be text (str), got {type(value).__name__}; the "
        "built-in formats render text messages only"
    )
