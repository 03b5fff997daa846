"""The one id rule: a full match, so no id can end in a newline (issue 15, item 7)."""

from __future__ import annotations

import pytest

from skillrag.corpus import check_id
from skillrag.corpus.model import ID_PATTERN
from skillrag.errors import InvalidIdError
from skillrag.skill.contract import validate_output


@pytest.mark.parametrize("value", ["ok", "doc_a_(x)+1", "a.b-c:d", "x" * 200])
def test_plain_ids_pass(value):
    assert check_id(value) == value
    assert ID_PATTERN.match(value) and ID_PATTERN.fullmatch(value)


# regression: ID_PATTERN ended in `$`, which also matches before a final newline, so "ok\n" passed
@pytest.mark.parametrize("value", ["ok\n", "ok\r\n", "\nok", "o\nk", "ok\n\n", "../x", "a/b", "a..b", "", "x" * 201])
def test_anything_else_is_refused(value):
    with pytest.raises(InvalidIdError, match="not a valid case id"):
        check_id(value, "case")
    assert ID_PATTERN.match(value) is None or ".." in value  # `..` is refused by check_id, not the pattern


def test_the_evidence_contract_uses_the_same_rule():
    reasons = validate_output({"case_id": "ok\n", "guidance": "g", "snippets": [], "n_snippets": 0,
                               "articles_consulted": []}, {})
    assert any("case_id" in r for r in reasons)
