"""The JSON decode every file goes through (msgspec, then the standard library for what
msgspec refuses) and the collector pause around large parses."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator

import pytest

from engine.files import TooDeep, collector_paused, json_loads
from engine.testsets.base import RowError
from engine.testsets.traces.flattened import layout

SAME = [
    '{"a": 1, "b": [1.5, -0.0, 1e-400, 1E+2], "a": 3}',  # a repeated key: the last wins
    "[18446744073709551616, -9223372036854775809, 123456789012345678901234567890]",
    '["\\u00e9\\ud83d\\ude00", "tab\\tnewline\\n", null, true, false]',
    "  \t\n[0.1, 5e-324, 1.7976931348623157e308, 9007199254740993.0]\r\n",
]


@pytest.mark.parametrize("text", SAME)
def test_decode_gives_what_the_standard_library_gives(text: str) -> None:
    got = json_loads(text, max_depth=None)
    assert repr(got) == repr(json.loads(text))
    assert [type(v) for v in got] == [type(v) for v in json.loads(text)]


@pytest.mark.parametrize("text", ["[NaN, Infinity]", "[1e400]", '["\\ud800"]'])
def test_what_msgspec_refuses_the_standard_library_still_reads(text: str) -> None:
    assert repr(json_loads(text)) == repr(json.loads(text))


def test_bad_json_keeps_its_line_and_column_and_depth_its_limit() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        json_loads('{"a": 1}\n{"b": }')
    assert (caught.value.lineno, caught.value.colno) == (2, 1)  # the standard library's
    with pytest.raises(json.JSONDecodeError, match="Expecting value") as bad:
        json_loads('{\n  "a": [1,\n  ]\n}')
    assert (bad.value.lineno, bad.value.colno) == (3, 3)
    with pytest.raises(TooDeep):
        json_loads("[" * 70 + "]" * 70)  # over MAX_DEPTH, under msgspec's own limit
    with pytest.raises(TooDeep):
        json_loads("[" * 5000 + "]" * 5000, max_depth=None)  # past msgspec and json both
    with pytest.raises(json.JSONDecodeError, match="digits"):
        json_loads("[" + "1" * 5000 + "]")


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
def test_collector_paused_restores_what_it_found() -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner one leaves it off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failed parse")
    assert gc.isenabled()
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()  # off before, off after


def test_flattened_lists_by_index_in_key_order() -> None:
    attrs = {
        "p.1.role": "user", "p.0.content": "first", "p.1.content": "second",
        "p.0.role": "system", "p.10.content": "eleventh", "q.x": 1, "p": "not a list",
    }  # fmt: skip
    assert layout(attrs).items(attrs, "p") == [
        {"content": "first", "role": "system"},
        {"role": "user", "content": "second"},
        {"content": "eleventh"},
    ]
    assert layout(attrs).items(attrs, "q") == []
    other = {**attrs, "p.1.role": "assistant"}  # same keys, other values: same layout
    assert layout(other).items(other, "p")[1]["role"] == "assistant"
    nested = {"m.0.calls.1.id": "b", "m.0.calls.0.id": "a"}
    assert layout(nested).items(nested, "m") == [{"calls.1.id": "b", "calls.0.id": "a"}]
    assert layout(nested).items(nested, "m.0.calls") == [{"id": "a"}, {"id": "b"}]


@pytest.mark.parametrize("key", ["p.\u00b2.role", "p.1234567.role"])
def test_a_malformed_index_fails_only_the_list_it_is_in(key: str) -> None:
    attrs = {"p.0.role": "user", key: "x", "r.0.id": "kept"}
    with pytest.raises(RowError, match="not an index of at most 6 digits"):
        layout(attrs).items(attrs, "p")
    assert layout(attrs).items(attrs, "r") == [{"id": "kept"}]
