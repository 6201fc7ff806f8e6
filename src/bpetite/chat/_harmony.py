"""The harmony format (OpenAI's gpt-oss), for text messages: what ``openai-harmony`` renders.

A message is ``<|start|>``, its header, ``<|message|>``, its content, and an end::

    <|start|>{role}[:{name}][ to={recipient}][<|channel|>{channel}][ {content_type}]
    <|message|>{content}<|end|>

A tool's message shows its ``name`` instead of its role (and needs one); a recipient
``"all"`` is not shown; a content type that starts with ``<|constrain|>`` has that
special token, then the rest as text; an assistant's message with a recipient (a tool
call) ends with ``<|call|>`` instead of ``<|end|>``. Each part between special tokens
is encoded on its own, as ordinary text (``openai-harmony``'s ``render_text_into``).

As ``openai-harmony``'s ``render_conversation`` (its ``auto_drop_analysis``): when the
last assistant message is on the ``final`` channel, the ``analysis`` messages before the
first ``final`` message are dropped, the reasoning of turns already answered. A
generation prompt is ``<|start|>assistant`` (``render_conversation_for_completion``).

A message is a mapping: ``role`` (system, developer, user, assistant or tool),
``content`` (text), and optionally ``name``, ``channel``, ``recipient`` and
``content_type``, as ``openai_harmony.Message.to_dict`` spells them.
"""

from __future__ import annotations

from typing import Any, Final

from bpetite.chat._messages import optional_text, required_text
from bpetite.errors import ParameterError

#: The name ``chat_template=`` takes.
HARMONY: Final = "harmony"
#: harmony's roles (``openai_harmony.Role``).
ROLES: Final = ("system", "developer", "user", "assistant", "tool")

START: Final = "<|start|>"
MESSAGE: Final = "<|message|>"
END: Final = "<|end|>"
CALL: Final = "<|call|>"
CHANNEL: Final = "<|channel|>"
CONSTRAIN: Final = "<|constrain|>"

#: One part of a rendering: its text, and whether it is a special token.
Part = tuple[str, bool]


def harmony_parts(conversation: list[dict[str, Any]], *, add_generation_prompt: bool) -> list[Part]:
    """The conversation as harmony's parts, in order: special tokens and runs of text."""
    checked = [_checked(message, index) for index, message in enumerate(conversation)]
    parts: list[Part] = []
    for message in _kept(checked):
        parts += _message_parts(message)
    if add_generation_prompt:
        parts += [(START, True), ("assistant", False)]
    return parts


def _checked(message: dict[str, Any], index: int) -> dict[str, str]:
    role = required_text(message, index, "role")
    if role not in ROLES:
        raise ParameterError(
            f"message {index}'s role {role!r} is not a harmony role: one of {', '.join(ROLES)}"
        )
    fields = {"role": role, "content": required_text(message, index, "content")}
    for key in ("name", "channel", "recipient", "content_type"):
        value = optional_text(message, index, key)
        if value is not None:
            fields[key] = value
    if role == "tool" and "name" not in fields:
        raise ParameterError(
            f"message {index} is a tool's and needs a 'name' (e.g. 'functions.get_weather'): "
            "harmony shows it in place of the role"
        )
    return fields


def _kept(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The messages ``render_conversation`` keeps (its ``auto_drop_analysis``)."""
    last_assistant = next(
        (message for message in reversed(messages) if message["role"] == "assistant"), None
    )
    if last_assistant is None or last_assistant.get("channel") != "final":
        return messages
    first_final = next(
        (index for index, message in enumerate(messages) if message.get("channel") == "final"),
        len(messages),
    )
    return [
        message
        for index, message in enumerate(messages)
        if not (index < first_final and message.get("channel") == "analysis")
    ]


def _message_parts(message: dict[str, str]) -> list[Part]:
    """One message, as ``openai-harmony``'s ``Render<Message>`` writes it."""
    role = message["role"]
    parts: list[Part] = [(START, True)]
    if role == "tool":
        parts.append((message["name"], False))
    else:
        parts.append((role, False))
        if "name" in message:
            parts.append((f":{message['name']}", False))
    recipient = message.get("recipient")
    if recipient is not None and recipient != "all":
        parts.append((f" to={recipient}", False))
    if "channel" in message:
        parts += [(CHANNEL, True), (message["channel"], False)]
    content_type = message.get("content_type")
    if content_type is not None:
        if content_type.startswith(CONSTRAIN):
            parts += [(" ", False), (CONSTRAIN, True)]
            rest = content_type[len(CONSTRAIN) :]
            if rest:
                parts.append((rest, False))
        else:
            parts.append((f" {content_type}", False))
    parts += [(MESSAGE, True), (message["content"], False)]
    parts.append((CALL if role == "assistant" and recipient is not None else END, True))
    return parts
