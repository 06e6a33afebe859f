"""Runs the official `openai` and `anthropic` Python SDKs against mock-provider.

Started by tests/it/sdk.rs (only when MOCK_PROVIDER_SDK_TESTS=1) with these variables set:
MOCK_OPENAI_BASE_URL, MOCK_RESPONSES_BASE_URL, MOCK_ANTHROPIC_BASE_URL, MOCK_CANARY,
MOCK_MARKER. The calls below
follow the order of the script registered by that test. Prints one JSON object describing what
the SDKs parsed; a missing SDK is an ImportError, i.e. a failure, never a skip.
"""

import json
import os

import anthropic
import openai


def openai_calls(base_url, canary, messages):
    client = openai.OpenAI(base_url=base_url, api_key=canary, max_retries=0)
    out = {}

    # Call 1: stream with include_usage, text and two interleaved tool calls.
    text, tools, usage, finish = "", {}, None, None
    stream = client.chat.completions.create(
        model="gpt-test",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
    )
    for chunk in stream:
        if chunk.usage is not None:
            usage = {
                "prompt_tokens": chunk.usage.prompt_tokens,
                "completion_tokens": chunk.usage.completion_tokens,
                "total_tokens": chunk.usage.total_tokens,
                "cached_tokens": chunk.usage.prompt_tokens_details.cached_tokens,
            }
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text += delta.content
            for call in delta.tool_calls or []:
                entry = tools.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
                if call.id:
                    entry["id"] = call.id
                if call.function is not None:
                    if call.function.name:
                        entry["name"] = call.function.name
                    if call.function.arguments:
                        entry["arguments"] += call.function.arguments
            if choice.finish_reason:
                finish = choice.finish_reason
    out["openai_stream"] = {
        "text": text,
        "tools": [tools[index] for index in sorted(tools)],
        "usage": usage,
        "finish": finish,
    }

    # Call 2: the same completion without streaming.
    response = client.chat.completions.create(model="gpt-test", messages=messages)
    message = response.choices[0].message
    out["openai_json"] = {
        "text": message.content,
        "tools": [
            {"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
            for call in message.tool_calls or []
        ],
        "total_tokens": response.usage.total_tokens,
        "finish": response.choices[0].finish_reason,
    }

    # Call 3: an in-band error after the first chunk must raise.
    try:
        for _ in client.chat.completions.create(model="gpt-test", messages=messages, stream=True):
            pass
        out["openai_in_band_error"] = "no error"
    except openai.APIError as error:
        out["openai_in_band_error"] = type(error).__name__

    # Call 4: 429 with retry-after-ms.
    try:
        client.chat.completions.create(model="gpt-test", messages=messages)
        out["openai_rate_limited"] = "no error"
    except openai.RateLimitError as error:
        out["openai_rate_limited"] = error.status_code
    return out


def responses_calls(base_url, canary, text_input):
    client = openai.OpenAI(base_url=base_url, api_key=canary, max_retries=0)
    out = {}

    def usage_of(usage):
        return {
            "input_tokens": usage.input_tokens,
            "cached_tokens": usage.input_tokens_details.cached_tokens,
            "output_tokens": usage.output_tokens,
            "reasoning_tokens": usage.output_tokens_details.reasoning_tokens,
            "total_tokens": usage.total_tokens,
        }

    def calls_of(output):
        return [
            {"call_id": item.call_id, "name": item.name, "arguments": item.arguments}
            for item in output
            if item.type == "function_call"
        ]

    # Call 1: the raw event stream: text deltas, function calls by item id, usage.
    text, calls, by_item, usage, status, sequence = "", [], {}, None, None, []
    for event in client.responses.create(model="gpt-test", input=text_input, stream=True):
        sequence.append(event.sequence_number)
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type == "response.output_item.added" and event.item.type == "function_call":
            entry = {"call_id": event.item.call_id, "name": event.item.name, "arguments": ""}
            by_item[event.item.id] = entry
            calls.append(entry)
        elif event.type == "response.function_call_arguments.delta":
            by_item[event.item_id]["arguments"] += event.delta
        elif event.type == "response.completed":
            usage = usage_of(event.response.usage)
            status = event.response.status
    out["responses_stream"] = {
        "text": text,
        "tools": calls,
        "usage": usage,
        "status": status,
        "sequence_numbers_count_from_0": sequence == list(range(len(sequence))),
    }

    # Call 2: the same response without streaming.
    response = client.responses.create(model="gpt-test", input=text_input)
    out["responses_json"] = {
        "text": response.output_text,
        "tools": calls_of(response.output),
        "usage": usage_of(response.usage),
        "status": response.status,
    }

    # Call 3: the streaming helper, which accumulates the events into the final response.
    with client.responses.stream(model="gpt-test", input=text_input) as stream:
        final = stream.get_final_response()
    out["responses_helper"] = {
        "text": final.output_text,
        "tools": calls_of(final.output),
        "usage": usage_of(final.usage),
        "status": final.status,
    }

    # Call 4: an in-band failure after the first delta: `error`, then `response.failed`.
    text, kinds, failure = "", [], None
    for event in client.responses.create(model="gpt-test", input=text_input, stream=True):
        kinds.append(event.type)
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type == "error":
            failure = {"error_code": event.code}
        elif event.type == "response.failed":
            failure["failed_code"] = event.response.error.code
            failure["status"] = event.response.status
    out["responses_failed"] = {"text": text, "last": kinds[-2:], **(failure or {})}

    # Call 5: the token budget runs out: `response.incomplete`.
    last = None
    for event in client.responses.create(model="gpt-test", input=text_input, stream=True):
        last = event
    out["responses_incomplete"] = {
        "type": last.type,
        "status": last.response.status,
        "reason": last.response.incomplete_details.reason,
        "output_tokens": last.response.usage.output_tokens,
    }

    # Call 6: 429 before any output.
    try:
        client.responses.create(model="gpt-test", input=text_input, stream=True)
        out["responses_rate_limited"] = "no error"
    except openai.RateLimitError as error:
        out["responses_rate_limited"] = {"status": error.status_code, "code": error.code}

    # Call 7: 503 without streaming.
    try:
        client.responses.create(model="gpt-test", input=text_input)
        out["responses_unavailable"] = "no error"
    except openai.InternalServerError as error:
        out["responses_unavailable"] = {"status": error.status_code, "type": error.type}
    return out


def block(content):
    if content.type == "text":
        return {"type": "text", "text": content.text}
    return {"type": content.type, "id": content.id, "name": content.name, "input": content.input}


def anthropic_calls(base_url, canary, messages):
    client = anthropic.Anthropic(base_url=base_url, api_key=canary, max_retries=0)
    out = {}

    # Call 1: the streaming helper, which accumulates and parses the tool input.
    with client.messages.stream(model="claude-test", max_tokens=64, messages=messages) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    out["anthropic_stream"] = {
        "text": streamed_text,
        "content": [block(content) for content in final.content],
        "input_tokens": final.usage.input_tokens,
        "cache_read_input_tokens": final.usage.cache_read_input_tokens,
        "output_tokens": final.usage.output_tokens,
        "stop_reason": final.stop_reason,
    }

    # Call 2: the same message without streaming.
    message = client.messages.create(model="claude-test", max_tokens=64, messages=messages)
    out["anthropic_json"] = {
        "content": [block(content) for content in message.content],
        "stop_reason": message.stop_reason,
    }

    # Call 3: an in-band overloaded error must raise.
    try:
        with client.messages.stream(model="claude-test", max_tokens=64, messages=messages) as stream:
            for _ in stream:
                pass
        out["anthropic_in_band_error"] = "no error"
    except anthropic.APIError as error:
        out["anthropic_in_band_error"] = type(error).__name__
    return out


def main():
    canary = os.environ["MOCK_CANARY"]
    messages = [{"role": "user", "content": "Say hi. " + os.environ["MOCK_MARKER"]}]
    result = {"openai_version": openai.__version__, "anthropic_version": anthropic.__version__}
    result.update(openai_calls(os.environ["MOCK_OPENAI_BASE_URL"], canary, messages))
    result.update(
        responses_calls(
            os.environ["MOCK_RESPONSES_BASE_URL"], canary, "Say hi. " + os.environ["MOCK_MARKER"]
        )
    )
    result.update(anthropic_calls(os.environ["MOCK_ANTHROPIC_BASE_URL"], canary, messages))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
