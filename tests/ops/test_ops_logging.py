"""JSON-lines logs: one object a line, request ids, and no user text at info level."""
from __future__ import annotations

import io
import json
import logging

import pytest

from edge_agent.ops.logging import JsonLinesFormatter, setup_logging


@pytest.fixture
def capture():
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)

    def setup(level=logging.DEBUG, log_text=False):
        setup_logging(level, json_lines=True, log_text=log_text, stream=stream)
        return stream

    yield setup
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in saved[0]:
        root.addHandler(h)
    root.setLevel(saved[1])


def lines(stream):
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_one_json_object_a_line_with_request_id(capture):
    stream = capture(logging.INFO)
    log = logging.getLogger("edge_agent.test")
    log.info("answered %s", "r-1", extra={"request_id": "r-1", "exit_kind": "complete", "wall_ms": 812.5})
    log.debug("hidden at info level")
    (rec,) = lines(stream)
    assert rec["msg"] == "answered r-1" and rec["level"] == "info" and rec["logger"] == "edge_agent.test"
    assert rec["request_id"] == "r-1" and rec["exit_kind"] == "complete" and rec["wall_ms"] == 812.5
    assert rec["ts"].endswith("+00:00")


def test_question_and_answer_text_stay_out_of_info_logs(capture):
    stream = capture(logging.DEBUG)
    log = logging.getLogger("edge_agent.test")
    secret = "When is my dentist appointment?"
    log.info("asked", extra={"request_id": "r-2", "question": secret, "answer": "Tuesday 9:00"})
    log.debug("asked (debug)", extra={"request_id": "r-2", "question": secret})
    info, debug = lines(stream)
    assert secret not in json.dumps(info) and "Tuesday" not in json.dumps(info)
    assert info["question_chars"] == len(secret) and info["answer_chars"] == len("Tuesday 9:00")
    assert debug["question"] == secret


def test_log_text_setting_lets_text_through(capture):
    stream = capture(logging.INFO, log_text=True)
    logging.getLogger("edge_agent.test").info("asked", extra={"question": "hello?"})
    assert lines(stream)[0]["question"] == "hello?"


def test_exceptions_and_odd_extras_are_serialised(capture):
    stream = capture(logging.INFO)
    log = logging.getLogger("edge_agent.test")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("failed", extra={"request_id": "r-3", "obj": object()})
    rec = lines(stream)[0]
    assert "ValueError: boom" in rec["exc"] and rec["obj"].startswith("<object object")


def test_plain_text_mode_for_terminals(capture):
    stream = io.StringIO()
    setup_logging(logging.INFO, json_lines=False, stream=stream)
    logging.getLogger("edge_agent.test").info("hello")
    assert "INFO edge_agent.test: hello" in stream.getvalue()
    bare = json.loads(JsonLinesFormatter().format(logging.makeLogRecord({"msg": "x", "question": "q?"})))
    assert bare["msg"] == "x" and "question" not in bare  # a record without a level is not debug
