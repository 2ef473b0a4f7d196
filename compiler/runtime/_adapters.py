"""The wrapped tools in each SDK's own shapes: OpenAI Chat Completions and Responses,
Anthropic Messages, Google Gemini (``google-genai``).

Each adapter has ``tools(wrapped)`` (the tool list to send), ``calls(reply)`` (the model
turn's tool calls as ``ModelCall``s, from the SDK's objects or their plain-dict form) and
``results(calls, results)`` (what to send back, in the SDK's request shape). Between the two,
``wrapped.run(calls)`` or ``await wrapped.arun(calls)`` runs the calls. Standard library only:
the SDKs' objects are read by attribute or key, the replies are plain dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._context import ModelCall
from ._results import ImageContent, TextContent, ToolResult
from ._wrap import WrappedTools


def _get(obj: object, *names: str) -> Any:
    """The first of ``names`` present on ``obj`` (attribute or mapping key), else None."""
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _items(reply: object, *names: str) -> list[Any]:
    """``reply`` itself when it is a list, else its list under one of ``names``."""
    if isinstance(reply, (list, tuple)):
        return list(reply)
    return list(_get(reply, *names) or [])


def _pairs(
    calls: Sequence[ModelCall], results: Sequence[ToolResult]
) -> list[tuple[ModelCall, ToolResult]]:
    if len(calls) != len(results):
        raise ValueError(f"{len(calls)} calls but {len(results)} results")
    return list(zip(calls, results, strict=True))


class _Adapter:
    dialects: tuple[str, ...] = ()

    def tools(self, wrapped: WrappedTools) -> list[Any]:
        """The tool list to send with the request."""
        self._check(wrapped)
        return list(wrapped.definitions())

    def _check(self, wrapped: WrappedTools) -> None:
        if wrapped.dialect not in self.dialects:
            raise ValueError(
                f"{type(self).__name__} needs tools wrapped for {' or '.join(self.dialects)}, "
                f"not {wrapped.dialect}"
            )


class OpenAIChat(_Adapter):
    """Chat Completions: ``tools=``; ``message.tool_calls``; ``role: tool`` messages."""

    dialects = ("openai", "openai-strict")

    def calls(self, message: object) -> list[ModelCall]:
        """The function calls of an assistant message (or of its ``tool_calls`` list)."""
        out = []
        for call in _items(message, "tool_calls"):
            if (_get(call, "type") or "function") != "function":
                continue
            function = _get(call, "function")
            out.append(
                ModelCall(
                    _get(call, "id"),
                    _get(function, "name") or "",
                    _get(function, "arguments") or "{}",
                )
            )
        return out

    def results(
        self, calls: Sequence[ModelCall], results: Sequence[ToolResult]
    ) -> list[dict[str, Any]]:
        """One ``tool`` message per call (text only: a tool message carries no images)."""
        return [
            {"role": "tool", "tool_call_id": c.id, "content": r.text}
            for c, r in _pairs(calls, results)
        ]


class OpenAIResponses(_Adapter):
    """Responses API: flat function tools; ``function_call`` items; ``function_call_output``."""

    dialects = ("openai", "openai-strict")

    def tools(self, wrapped: WrappedTools) -> list[Any]:
        self._check(wrapped)
        return list(wrapped.definitions(api="responses"))

    def calls(self, response: object) -> list[ModelCall]:
        """The ``function_call`` items of a response (or of its ``output`` list)."""
        return [
            ModelCall(
                _get(item, "call_id"), _get(item, "name") or "", _get(item, "arguments") or "{}"
            )
            for item in _items(response, "output")
            if _get(item, "type") == "function_call"
        ]

    def results(
        self, calls: Sequence[ModelCall], results: Sequence[ToolResult]
    ) -> list[dict[str, Any]]:
        """One ``function_call_output`` input item per call."""
        return [
            {"type": "function_call_output", "call_id": c.id, "output": r.text}
            for c, r in _pairs(calls, results)
        ]


class AnthropicMessages(_Adapter):
    """Messages API: ``tools=``; ``tool_use`` blocks; one user message of ``tool_result``s."""

    dialects = ("anthropic",)

    def calls(self, message: object) -> list[ModelCall]:
        """The ``tool_use`` blocks of an assistant message (or of its ``content`` list)."""
        return [
            ModelCall(_get(block, "id"), _get(block, "name") or "", _get(block, "input") or {})
            for block in _items(message, "content")
            if _get(block, "type") == "tool_use"
        ]

    def results(self, calls: Sequence[ModelCall], results: Sequence[ToolResult]) -> dict[str, Any]:
        """The user message that answers the calls (text and image blocks, ``is_error``)."""
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": c.id,
                "content": [_anthropic_block(b) for b in r.content],
                "is_error": r.is_error,
            }
            for c, r in _pairs(calls, results)
        ]
        return {"role": "user", "content": blocks}


def _anthropic_block(block: TextContent | ImageContent) -> dict[str, Any]:
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text}
    source = {"type": "base64", "media_type": block.mime_type, "data": block.data}
    return {"type": "image", "source": source}


class Gemini(_Adapter):
    """google-genai: one ``Tool`` of ``functionDeclarations``; ``functionCall`` parts; a user
    ``Content`` of ``functionResponse`` parts (``{"output": ...}`` or ``{"error": ...}``)."""

    dialects = ("gemini", "gemini-json")

    def tools(self, wrapped: WrappedTools) -> list[Any]:
        self._check(wrapped)
        return [{"functionDeclarations": list(wrapped.definitions())}]

    def calls(self, reply: object) -> list[ModelCall]:
        """The function calls of a response (first candidate), a ``Content`` or its parts."""
        candidates = None if isinstance(reply, (list, tuple)) else _get(reply, "candidates")
        if candidates:
            reply = _get(candidates[0], "content")
        out = []
        for part in _items(reply, "parts"):
            call = _get(part, "function_call", "functionCall")
            if call is not None:
                out.append(
                    ModelCall(_get(call, "id"), _get(call, "name") or "", _get(call, "args") or {})
                )
        return out

    def results(self, calls: Sequence[ModelCall], results: Sequence[ToolResult]) -> dict[str, Any]:
        """The user ``Content`` that answers the calls."""
        parts = []
        for c, r in _pairs(calls, results):
            response: dict[str, Any] = {
                "name": c.name,
                "response": {"error" if r.is_error else "output": r.text},
            }
            if c.id is not None:
                response["id"] = c.id
            parts.append({"functionResponse": response})
        return {"role": "user", "parts": parts}


openai_chat: Final = OpenAIChat()
openai_responses: Final = OpenAIResponses()
anthropic_messages: Final = AnthropicMessages()
gemini: Final = Gemini()
