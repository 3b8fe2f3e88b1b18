"""jsonstrict's messages and positions are the same on every supported Python."""

from __future__ import annotations

import pytest

from harness_gate import jsonstrict


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Python 3.13 reports a trailing comma at the comma, 3.10-3.12 at the bracket after it:
        # the gate names the comma on all of them.
        ('{"a": 1,}', "trailing comma before the end of an object at line 1 column 8"),
        ("[1, 2,\n]", "trailing comma before the end of an array at line 1 column 6"),
        ('{\n  "a": 1,\n  "b": 2,\n}\n', "trailing comma before the end of an object at line 3 column 9"),
        ('{"a": [1,\t\r\n ], "b": 1}', "trailing comma before the end of an array at line 1 column 9"),
        # Not trailing commas: the interpreter's own message, which does not vary.
        ("[,]", "Expecting value at line 1 column 2"),
        ("[1,,]", "Expecting value at line 1 column 4"),
        ('{"a":}', "Expecting value at line 1 column 6"),
        ('["a,"', "Expecting ',' delimiter at line 1 column 6"),
    ],
)
def test_a_syntax_error_reads_the_same_on_every_python(text: str, message: str) -> None:
    with pytest.raises(jsonstrict.StrictJSONError) as caught:
        jsonstrict.loads(text)
    assert str(caught.value) == message


def test_a_comma_inside_a_string_is_not_a_trailing_comma() -> None:
    assert jsonstrict.loads('{"a": "x,"}') == {"a": "x,"}
    assert jsonstrict.loads('["],", ","]') == ["],", ","]
