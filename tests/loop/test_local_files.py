"""An upload of a local file (``curl -F photo=@photo.jpg``, HTTPie's ``photo@photo.jpg``,
requests' ``files=``) is checked, never sent: its content is a file on the machine that
would run the command, which autofeedback does not read, and the same request with an
empty part is not the upload the model wrote. Before, the loop and the ReAct runner sent
it with the file part empty."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from _support.http import empty, serve

from autofeedback import ApiCatalog, FileNotRead
from autofeedback._parse import parse_output
from autofeedback.loop._llm import CallableLLM, Usage
from autofeedback.loop._loop import FeedbackLoop
from autofeedback.loop._send import allowed_hosts, build_http, send

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "photos", "version": "1"},
    "servers": [{"url": "http://127.0.0.1"}],
    "paths": {
        "/photos": {
            "post": {
                "operationId": "uploadPhoto",
                "requestBody": {
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "required": ["photo"],
                                "properties": {
                                    "photo": {"type": "string", "format": "binary"},
                                    "caption": {"type": "string"},
                                },
                            }
                        }
                    }
                },
                "responses": {"201": {"description": "stored"}},
            }
        }
    },
}


@pytest.mark.parametrize(
    ("output", "unread"),
    [
        ("curl -F photo=@/home/me/photo.jpg -F caption=dog http://127.0.0.1/photos", ("photo",)),
        ("curl -F 'caption=<notes.txt' -F photo=@a.jpg http://127.0.0.1/photos",
         ("caption", "photo")),
        ("http -f POST http://127.0.0.1/photos photo@photo.jpg caption=dog", ("photo",)),
        ("requests.post('http://127.0.0.1/photos', files={'photo': open('a.jpg', 'rb')})",
         ("photo",)),
        ("curl -F caption=dog http://127.0.0.1/photos", ()),
        ("curl --form-string 'caption=@home' http://127.0.0.1/photos", ()),
    ],
)  # fmt: skip
def test_the_parts_whose_content_is_a_local_file_are_named(
    output: str, unread: tuple[str, ...]
) -> None:
    (request,) = parse_output(output).requests
    assert request.unread_files == unread


def test_send_refuses_an_upload_of_a_local_file() -> None:
    catalog = ApiCatalog.from_obj(SPEC, source="photos")
    (request,) = parse_output("curl -F photo=@photo.jpg http://127.0.0.1/photos").requests
    with serve(empty(201)) as (url, paths):
        call = build_http(request, catalog.get("uploadPhoto"), url)
        with pytest.raises(FileNotRead, match=r"upload of 'photo' reads a local file"):
            send(call, allowed=allowed_hosts(catalog, url))
    assert paths == []


def test_the_loop_checks_the_upload_and_stops_without_sending_it() -> None:
    catalog = ApiCatalog.from_obj(SPEC, source="photos")
    outputs = ["curl -F photo=@photo.jpg -F caption=dog http://127.0.0.1/photos"]

    def model(messages: list[dict[str, Any]]) -> tuple[str, Usage]:
        return outputs.pop(0), Usage(prompt_tokens=10, completion_tokens=5)

    bodies: list[bytes] = []

    def answer(handler: BaseHTTPRequestHandler) -> None:
        bodies.append(handler.rfile.read(int(handler.headers.get("Content-Length", 0))))
        empty(201)(handler)

    with serve(answer) as (url, paths):
        loop = FeedbackLoop(CallableLLM(model), catalog, base_url=url, retrieve_docs=False)
        result = loop.run("upload my dog's photo")
    assert (paths, bodies) == ([], [])
    assert result.stop_reason == "file-not-read" and not result.success
    (attempt,) = result.attempts
    assert attempt.findings == () and attempt.status is None and attempt.feedback is None
    assert attempt.error is not None and "'photo'" in attempt.error


def test_the_react_runner_stops_without_sending_the_upload() -> None:
    from autofeedback.loop._react_runner import ReactRunner

    catalog = ApiCatalog.from_obj(SPEC, source="photos")
    outputs = ["Thought: upload.\nAction: curl -F photo=@photo.jpg http://127.0.0.1/photos"]

    def model(messages: list[dict[str, Any]]) -> tuple[str, Usage]:
        return outputs.pop(0), Usage(prompt_tokens=10, completion_tokens=5)

    with serve(empty(201)) as (url, paths):
        result = ReactRunner(CallableLLM(model), catalog, base_url=url).run("upload my photo")
    assert paths == [] and result.calls == ()
    assert result.stop_reason == "file-not-read"
    assert result.turns[-1].error is not None and "'photo'" in result.turns[-1].error
