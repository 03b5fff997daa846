"""The one text layer: every package splits and recognises text here, and nowhere else.

It sits at the bottom of the package graph (it imports nothing from skillrag but ``errors``) and
knows nothing about articles, pages or cases.

* Markdown blocks, read by markdown-it-py with line maps and exact offsets (``blocks``,
  ``table_rows``, ``plain``);
* sentences (pysbd) and the sentences that point back to the one before (``sentences``,
  ``refers_back``, ``with_antecedents``); sentence-sized ``units`` of a body, the ``reading_units`` a
  search preview is made of, quotable ``passages``;
* the one analyzer: tokens, stop words, Snowball stems (``Analyzer``, ``stem``, ``STOP_WORDS``), the
  one the BM25 index uses, and the one BM25 set-up (``BM25``: k1, b, idf, ``bm25s`` index, from terms or
  from stored term counts, ``TermCounts``);
* tool names: the one rule (``tool_names``, ``uses_tool``, ``code_names``);
* values: money, percentages, durations, data amounts, counts, URLs, dates (``find_values``,
  ``value_kinds``, ``zero_value``), and the rule a sentence states (``rule_of``);
* what must never be quoted as guidance (``noise``);
* what a long request is about: the sentences not about the conversation itself and the names it
  mentions (``request_sentences``, ``about_conversation``, ``capitalised_names``).

Every offset is a character offset into the string given, so a slice is always byte-exact for quoting.

    >>> from skillrag import text
    >>> body = "A $5.00 fee applies, e.g. basic checking. It is waived."
    >>> [body[a:b] for a, b in text.sentences(body)]
    ['A $5.00 fee applies, e.g. basic checking.', 'It is waived.']
"""

from skillrag.text._analyzer import (
    STOP_WORDS,
    STOPWORD_LISTS,
    STOPWORDS_EN,
    STOPWORDS_EN_PLUS,
    Analyzer,
    stem,
)
from skillrag.text._bm25 import BM25, BM25_B, BM25_K1, TermCounts
from skillrag.text._markdown import Block, Cell, TableRow, blocks, line_starts, plain, table_rows
from skillrag.text._noise import is_definition, is_glossary_heading, is_parameter_table, noise
from skillrag.text._passages import Passage, passages
from skillrag.text._requests import about_conversation, capitalised_names, flat_sentences, request_sentences
from skillrag.text._sentences import refers_back, sentence_texts, sentences, with_antecedents
from skillrag.text._tools import (
    IDENTIFIER,
    IDENTIFIER_PATTERN,
    code_names,
    is_field_name,
    tool_names,
    uses_tool,
)
from skillrag.text._units import Span, reading_units, units
from skillrag.text._values import (
    ALL_KINDS,
    VALUE_KINDS,
    RuleInfo,
    Value,
    find_values,
    has_figure,
    kind_of,
    rule_of,
    value_kinds,
    zero_value,
)

__all__ = [
    "ALL_KINDS",
    "BM25",
    "BM25_B",
    "BM25_K1",
    "IDENTIFIER",
    "IDENTIFIER_PATTERN",
    "STOPWORDS_EN",
    "STOPWORDS_EN_PLUS",
    "STOPWORD_LISTS",
    "STOP_WORDS",
    "VALUE_KINDS",
    "Analyzer",
    "Block",
    "Cell",
    "Passage",
    "RuleInfo",
    "Span",
    "TableRow",
    "TermCounts",
    "Value",
    "about_conversation",
    "blocks",
    "capitalised_names",
    "code_names",
    "find_values",
    "flat_sentences",
    "has_figure",
    "is_definition",
    "is_field_name",
    "is_glossary_heading",
    "is_parameter_table",
    "kind_of",
    "line_starts",
    "noise",
    "passages",
    "plain",
    "reading_units",
    "refers_back",
    "request_sentences",
    "rule_of",
    "sentence_texts",
    "sentences",
    "stem",
    "table_rows",
    "tool_names",
    "units",
    "uses_tool",
    "value_kinds",
    "with_antecedents",
    "zero_value",
]
