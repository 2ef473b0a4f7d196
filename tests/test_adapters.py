"""The wrapped tools in each SDK's shapes, checked with the SDKs' own types, and a scripted
model turn through each (no network): tool list -> the model's calls -> results back."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pydantic
import pytest
from anthropic.types import Message, MessageParam, ToolParam
from google.genai import types as genai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionToolMessageParam,
    ChatCompletionToolParam,
)
from openai.types.responses import FunctionToolParam, ResponseFunctionToolCall
from openai.types.responses.response_input_param import FunctionCallOutput

from tests.helpers import import_runtime
from tests.test_shipped import BUILD


@pytest.fixture(scope="module")
def shipped() -> ModuleType:
    return import_runtime(BUILD, "toolc_runtime")


def _read(args: dict[str, Any], call: Any) -> str:
    return f"1: contents of {args['path']}"


def _view_image(args: dict[str, Any], call: Any) -> Any:
    # an AgentToolResult as a plain mapping (what image_result builds)
    return {"content": [{"type": "text", "text": "MEDIA:/tmp/a.gif"},
                        {"type": "image", "data": "R0lGODlh", "mimeType": "image/gif"}],
            "details": {"path": "/tmp/a.gif"}}


def tools_for(rt: ModuleType, provider: str, model: str | None = None) -> Any:
    ctx = rt.CallContext(agent_id="main", model_provider=provider, model_id=model)
    resolved = rt.resolve(agent_id="main", model_provider=provider, model_id=model)
    # 2026.9 renamed the image tool view_image (a policy naming image still reaches it).
    return rt.wrap(resolved, {"read": _read, "view_image": _view_image}, context=ctx)


def test_openai_chat_round_trip(shipped: ModuleType) -> None:
    tools = tools_for(shipped, "openai", "gpt-5")
    adapter = shipped.openai_chat
    for tool in adapter.tools(tools):
        pydantic.TypeAdapter(ChatCompletionToolParam).validate_python(tool)
    reply = ChatCompletion.model_validate({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-5",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "read", "arguments": '{"path": "/a"}'}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "nope", "arguments": "{}"}}]}}]})
    calls = adapter.calls(reply.choices[0].message)
    messages = adapter.results(calls, tools.run(calls))
    for message in messages:
        pydantic.TypeAdapter(ChatCompletionToolMessageParam).validate_python(message)
    assert messages[0] == {"role": "tool", "tool_call_id": "call_1", "content": "1: contents of /a"}
    assert json.loads(messages[1]["content"])["error"] == "Tool nope not found (dialect openai)"


def test_openai_responses_round_trip(shipped: ModuleType) -> None:
    tools = tools_for(shipped, "openai")
    adapter = shipped.openai_responses
    for tool in adapter.tools(tools):
        pydantic.TypeAdapter(FunctionToolParam).validate_python(tool)
    output = [ResponseFunctionToolCall.model_validate(
        {"type": "function_call", "call_id": "fc_1", "name": "read",
         "arguments": '{"path": "/b"}'})]
    calls = adapter.calls({"output": output})
    items = adapter.results(calls, tools.run(calls))
    pydantic.TypeAdapter(FunctionCallOutput).validate_python(items[0])
    assert items == [{"type": "function_call_output", "call_id": "fc_1",
                      "output": "1: contents of /b"}]


def test_anthropic_round_trip(shipped: ModuleType) -> None:
    tools = tools_for(shipped, "anthropic")
    adapter = shipped.anthropic_messages
    for tool in adapter.tools(tools):
        pydantic.TypeAdapter(ToolParam).validate_python(tool)
    reply = Message.model_validate({
        "id": "m1", "type": "message", "role": "assistant", "model": "claude",
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "tu_1", "name": "Read",
                     "input": {"file_path": "/c"}},
                    {"type": "tool_use", "id": "tu_2", "name": "view_image",
                     "input": {"prompt": "what is it?", "image": "/tmp/a.gif"}}]})
    calls = adapter.calls(reply)
    answer = adapter.results(calls, tools.run(calls))
    pydantic.TypeAdapter(MessageParam).validate_python(answer)
    first, second = answer["content"]
    assert first == {"type": "tool_result", "tool_use_id": "tu_1", "is_error": False,
                     "content": [{"type": "text", "text": "1: contents of /c"}]}
    assert second["content"][1]["source"] == {"type": "base64", "media_type": "image/gif",
                                              "data": "R0lGODlh"}


@pytest.mark.parametrize("dialect", ["gemini", "gemini-json"])
def test_gemini_round_trip(shipped: ModuleType, dialect: str) -> None:
    resolved = shipped.resolve(agent_id="main", model_provider="google")
    tools = shipped.wrap(resolved, {"read": _read}, dialect=dialect,
                         context=shipped.CallContext(agent_id="main"))
    adapter = shipped.gemini
    for tool in adapter.tools(tools):
        genai.Tool.model_validate(tool)
    reply = genai.GenerateContentResponse.model_validate({"candidates": [{"content": {
        "role": "model", "parts": [{"functionCall": {"id": "g1", "name": "read",
                                                      "args": {"path": "/d"}}},
                                   {"functionCall": {"name": "read", "args": {}}}]}}]})
    calls = adapter.calls(reply)
    answer = genai.Content.model_validate(adapter.results(calls, tools.run(calls)))
    ok, failed = (p.function_response for p in answer.parts or [])
    assert (ok.id, ok.name, ok.response) == ("g1", "read", {"output": "1: contents of /d"})
    assert "Missing required parameter: path" in json.loads(failed.response["error"])["error"]


def test_adapters_refuse_the_wrong_dialect(shipped: ModuleType) -> None:
    with pytest.raises(ValueError, match="anthropic"):
        shipped.anthropic_messages.tools(tools_for(shipped, "openai"))
    with pytest.raises(ValueError, match="2 calls but 1 results"):
        shipped.openai_chat.results([shipped.ModelCall("a", "read", {})] * 2, [None])


def test_system_prompt_tool_list(shipped: ModuleType) -> None:
    tools = shipped.resolve(agent_id="viewer")
    text = shipped.system_prompt_tools(tools)
    lines = text.splitlines()
    assert lines[0] == "## Tool availability (filtered by policy)"
    assert lines[1] == "- read: Read file contents"  # 2026.9's own summary line
    assert [line.split(":")[0][2:] for line in lines[1:]] == list(tools.names)
    assert text.endswith("\n")
    anthropic = shipped.system_prompt_tools(shipped.resolve(agent_id="main"), dialect="anthropic")
    assert "- Read: Read file contents\n" in anthropic


def test_summary_falls_back_to_the_first_sentence(rt: ModuleType) -> None:
    text = rt.system_prompt_tools(rt.resolve(sender_is_owner=True))
    assert "- echo: Echo text back.\n" in text  # its summary is empty
