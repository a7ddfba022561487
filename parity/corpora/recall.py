"""The recall corpus: the blocks and calls that the golden journal records from Go.

It covers every bullet of the contract's "golden journal" section: 38 readable
blocks (accents and Unicode case, HTML tags and entities, an empty block, long
first lines, twenty-five similar blocks, code points of Unicode 16 and 17) plus a
locked one, and the calls of both tools: those whose outputs differ between the
Unicode versions of the Go releases the port matches among them. ``{{seq:NAME}}``
in args stands for the seq the Go gave block ``NAME``.

``printed_seqs`` says where the two tools' texts (the contract's "The texts") print
a seq: a block's header (``[r1000] label``: the first line of ``recall``'s block
text; each entry of a ``recall_search`` result, found through the blocks' labels),
and an id or query quoted back with ``%q`` where the args cite ``{{seq:NAME}}``.

The cases ``parity adopt`` took from the shadow's divergences (``recall_adopted``,
generated) come last, their blocks archived after the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from parity.corpora import recall_adopted
from parity.corpus import Corpus, CorpusBlock, CorpusCall, SeqSite, ToolHost, split_template
from recall._tools import replace_surrogates

__all__ = ["BLOCKS", "CALLS", "CORPUS", "plain_id_seq", "printed_seqs", "symbolic_args"]


def _fill(prefix: str, runes: int, pad: str) -> str:
    """``prefix`` padded with ``pad`` to exactly ``runes`` code points."""
    text = prefix + pad * runes
    return text[:runes]


# A first line of 161 runes whose last rune is two bytes long: the cut falls just before it.
_LONG_161 = _fill("Où est la boîte à chaussures ? Élan, naïveté, façade, cœur, ", 160, "ô") + "é"
# Exactly 160 runes once trimmed: shown whole, no ellipsis.
_EXACT_160 = _fill("exactly one hundred sixty runes, then padding: ", 160, "€")
# HTML entities repeated past 160 runes, so the cut lands inside one.
_ENTITIES = "&lt;p&gt; &amp;amp; &quot;quoted&quot; &#39;apos&#39; &nbsp; " * 4

_SIMILAR = tuple(
    CorpusBlock(
        f"deploy-{i:02d}",
        f"deploy log {i:02d}" if i % 5 else f"release notes {i:02d}",
        f"Deploy step {i} of the nightly release\n"
        f"status: {'failed' if i % 4 == 0 else 'ok'}\n"
        f"host: web-{i % 3}",
    )
    for i in range(1, 26)
)

BLOCKS: tuple[CorpusBlock, ...] = (
    CorpusBlock(
        "accents",
        "Recette : crème brûlée",
        "Crème brûlée à la vanille\n"
        "Cuire au four à 150 °C, puis caraméliser ; 6÷3=2 parts.\n"
        "ÉCOLE, ÉTÉ, ÇA, ŒUVRE, Ÿ, À BIENTÔT",
    ),
    CorpusBlock(
        "unicode-case",
        "İstanbul notes",
        "İSTANBUL ve IĞDIR, \u0131spanak\n"
        "ΣΟΦΊΑ σοφία ΌΣΟΣ\n"
        "Straße, MASSE, ﬁle, \u212aelvin, \u212bngström, ǅemal",
    ),
    CorpusBlock(
        "html-tags",
        "<b>Bold</b> & co",
        '<div class="note">Tom &amp; Jerry</div>\n<script>alert(\'x\' < "y" && 1 > 0)</script>',
    ),
    CorpusBlock(
        "html-entities",
        "entities &lt;&gt;",
        _ENTITIES + "\nline\u2028separator\u2029paragraph\n",
    ),
    CorpusBlock("empty", "empty block", ""),
    CorpusBlock("no-label", "", "\n   \n\t\r\n  no label here, blank lines first  \nsecond"),
    CorpusBlock("long-line", "long first line", "  " + _LONG_161 + "  \nthe second line"),
    # A blank first line, then 160 runes once trimmed, more before: the line alone is shown.
    CorpusBlock("line-160", "line of 160 runes", "\n\t" + _EXACT_160 + " \r\nafter"),
    CorpusBlock(
        "snake-case",
        "config_file_name",
        "MAX_RETRY_COUNT = 3\n"
        "snake_case_identifier, kebab-case-identifier, CamelCaseIdentifier\n"
        "path/to/file.txt v1.2.3 e-mail@example.com",
    ),
    CorpusBlock(
        "controls",
        'tab\tlabel "quoted"',
        "\x00nul\x01 \x7f del \b\f bell\x07 \ufeffbom\u200bzero-width\u00a0nbsp\r\n"
        "windows line\rCR only\u0085nel 😀 emoji",
    ),
    *_SIMILAR,
    CorpusBlock("blank-first-line", "kiwi orchard", "\nKiwi trees need a sunny slope"),
    CorpusBlock("y-diaeresis", "L'Haÿ-les-Roses", "L'HAŸ-LES-ROSES, Val-de-Marne"),
    # Code points of Unicode 16 and 17: Go 1.21 to 1.26 (Unicode 15.0.0) quote them.
    CorpusBlock(
        "unicode-16",
        "\u1c89 letters \U0001fae9",
        "\u1c89\u1c8a \ua7cb\u0264 \ua7dc\u019b \U00010d50\U00010d70 \U00016ea0\U00016ebb"
        " \u20c1 \U0001fae9\ncafé \U0001fae9, tired eyes",
    ),
    CorpusBlock(
        "locked",
        "locked secret",
        "Top secret: this block is locked, it never appears. unicorn zebra",
        locked=True,
    ),
)


def _deep(depth: int) -> str:
    """A query for "deploy" beside arrays nested ``depth`` deep (the object adds one)."""
    return '{"query": "deploy", "x": ' + "[" * depth + "]" * depth + "}"


_R = "{{seq:accents}}"

_RECALL: tuple[tuple[str, str], ...] = (
    # id absent, not a string, blank; args that are not a JSON object
    ("recall-id-absent", "{}"),
    ("recall-args-empty-text", ""),
    ("recall-args-null", "null"),
    ("recall-args-invalid-json", '{"id": "r' + _R + '"'),
    ("recall-args-array", '["r' + _R + '"]'),
    ("recall-args-string", '"r' + _R + '"'),
    ("recall-args-trailing-garbage", '{"id": "r' + _R + '"} x'),
    ("recall-id-null", '{"id": null}'),
    ("recall-id-number", '{"id": ' + _R + "}"),
    ("recall-id-bool", '{"id": true}'),
    ("recall-id-object", '{"id": {"id": "r' + _R + '"}}'),
    ("recall-id-empty", '{"id": ""}'),
    ("recall-id-blank", '{"id": " \\t\\n\\r "}'),
    ("recall-id-blank-unicode", '{"id": "\u00a0\\u2003\u3000\\u0085\u2028"}'),
    ("recall-id-info-separators", '{"id": "\\u001c\\u001f"}'),
    ("recall-id-key-case", '{"ID": "r' + _R + '", "Id": "r1"}'),
    ("recall-id-repeated-key", '{"id": "r1", "id": "r' + _R + '"}'),
    # found blocks, shown verbatim
    ("recall-id-plain", '{"id": "r' + _R + '"}'),
    ("recall-unicode-case-block", '{"id": "r{{seq:unicode-case}}"}'),
    ("recall-html-tags-block", '{"id": "r{{seq:html-tags}}"}'),
    ("recall-html-entities-block", '{"id": "r{{seq:html-entities}}"}'),
    ("recall-empty-block", '{"id": "r{{seq:empty}}"}'),
    ("recall-no-label-block", '{"id": "r{{seq:no-label}}"}'),
    ("recall-controls-block", '{"id": "r{{seq:controls}}"}'),
    ("recall-long-line-block", '{"id": "r{{seq:long-line}}"}'),
    ("recall-last-similar-block", '{"id": "r{{seq:deploy-25}}"}'),
    # prefix and space variants, leading zeros
    ("recall-id-uppercase-prefix", '{"id": "R' + _R + '"}'),
    ("recall-id-no-prefix", '{"id": "' + _R + '"}'),
    ("recall-id-prefix-r-then-r-upper", '{"id": "rR' + _R + '"}'),
    ("recall-id-prefix-r-upper-then-r", '{"id": "Rr' + _R + '"}'),
    ("recall-id-prefix-doubled", '{"id": "rr' + _R + '"}'),
    ("recall-id-spaces-around", '{"id": "  r' + _R + '\\t"}'),
    ("recall-id-space-after-prefix", '{"id": " r  ' + _R + ' "}'),
    ("recall-id-unicode-spaces", '{"id": "\u3000r\\u00a0' + _R + '\u2029"}'),
    ("recall-id-zero-width-space", '{"id": "r\\u200b' + _R + '"}'),
    ("recall-id-inner-space", '{"id": "r1 ' + _R + '"}'),
    ("recall-id-leading-zeros", '{"id": "r000' + _R + '"}'),
    ("recall-id-leading-zeros-no-prefix", '{"id": "0' + _R + '"}'),
    # malformed, negative, plus sign, zero
    ("recall-id-prefix-only", '{"id": "r"}'),
    ("recall-id-zero", '{"id": "r0"}'),
    ("recall-id-zeros", '{"id": "r0000"}'),
    ("recall-id-negative", '{"id": "r-' + _R + '"}'),
    ("recall-id-plus-sign", '{"id": "r+' + _R + '"}'),
    ("recall-id-trailing-letter", '{"id": "r' + _R + 'a"}'),
    ("recall-id-decimal-point", '{"id": "r' + _R + '.0"}'),
    ("recall-id-exponent", '{"id": "r1e3"}'),
    ("recall-id-hex", '{"id": "r0x3e8"}'),
    ("recall-id-underscore", '{"id": "r1_000"}'),
    ("recall-id-fullwidth-digits", '{"id": "r\uff11\uff10\uff10\uff10"}'),
    ("recall-id-arabic-digits", '{"id": "r\u0661\u0660\u0660\u0660"}'),
    ("recall-id-superscript", '{"id": "r\u00b9"}'),
    # well formed but absent, oversized
    ("recall-id-absent-block", '{"id": "r999999"}'),
    ("recall-id-below-first", '{"id": "r1"}'),
    ("recall-id-max-int64", '{"id": "r9223372036854775807"}'),
    ("recall-id-past-int64", '{"id": "r9223372036854775808"}'),
    ("recall-id-oversized", '{"id": "r99999999999999999999"}'),
    # quotes and other characters that %q escapes
    ("recall-id-double-quotes", '{"id": "r\\"' + _R + '\\""}'),
    ("recall-id-quotes-backslash", '{"id": "\'r' + _R + "' \\\\ `x`\"}"),
    ("recall-id-unprintable", '{"id": "r\\u0007\\u007f\u00ad\\ufeff\\u2028é😀"}'),
    ("recall-id-lone-surrogate", '{"id": "r\\ud800' + _R + '"}'),
    ("recall-id-surrogate-pair", '{"id": "\\ud83d\\ude00"}'),
    # code points newer than Unicode 15.0.0: Go before 1.27 escapes them
    ("recall-id-unicode-16-emoji", '{"id": "r\U0001fae9"}'),
    ("recall-id-unicode-16-emoji-escaped", '{"id": "r\\ud83e\\udee9' + _R + '"}'),
    ("recall-id-unicode-16-letters", '{"id": "r\u1c89\ua7cb\ua7dc\U00010d50 \u20c1"}'),
    ("recall-id-unicode-17-letters", '{"id": "\U00016ea0\U00016ebbr' + _R + '"}'),
    ("recall-unicode-16-block", '{"id": "r{{seq:unicode-16}}"}'),
    # a locked block's id
    ("recall-id-locked", '{"id": "r{{seq:locked}}"}'),
    # leading zeros past 19 digits; capitals around the id
    ("recall-id-many-leading-zeros", '{"id": "r' + "0" * 24 + _R + '"}'),
    ("recall-id-capitals-around", '{"id": "Xr' + _R + 'X"}'),
    # every escape of %q and of JSON strings, hex digits of both cases, surrogate pairs
    ("recall-id-control-escapes", '{"id": "r1\\b\\f\\n\\r\\t\\u000b\\/\\\\\\"x"}'),
    ("recall-id-delete-only", '{"id": "r\\u007f"}'),
    ("recall-id-raw-beside-surrogates", '{"id": "r\ud7ff\ue000"}'),
    (
        "recall-id-hex-escapes",
        '{"id": "r\\u00A9\\u00AF\\u00F9\\u0039\\u00fA\\ud7ff\\ue000\\uffff'
        "\\ud800\\udc00\\uDBFF\\uDFFF\\udbff\\udfff\\uD8A0\\uDCA0\\ud899\\udc99"
        '\\ud8aa\\udcaa\\uDB80\\uDC00\\ud800\\udb00\\uD800\\uDB00"}',
    ),
)

_SEARCH: tuple[tuple[str, str], ...] = (
    # query absent, not a string, blank
    ("search-query-absent", "{}"),
    ("search-args-invalid-json", '{"query": "deploy"'),
    ("search-args-bad-escape", '{"query": "dep\\loy"}'),
    ("search-args-byte-order-mark", '\ufeff{"query": "deploy"}'),
    ("search-args-trailing-whitespace", '{"query": "deploy"}\n\t '),
    ("search-query-null", '{"query": null}'),
    ("search-query-number", '{"query": 42}'),
    ("search-query-array", '{"query": ["deploy"]}'),
    ("search-query-empty", '{"query": ""}'),
    ("search-query-blank", '{"query": " \\t\\n "}'),
    ("search-query-blank-unicode", '{"query": "\u3000\\u00a0\\u2028\u0085"}'),
    ("search-query-info-separator", '{"query": "\\u001f"}'),
    ("search-query-key-case", '{"Query": "deploy"}'),
    # words too short
    ("search-words-too-short", '{"query": "a b c 1 2 é"}'),
    ("search-words-too-short-joined", '{"query": "x-y_z.w"}'),
    # case, accents, İ, Greek outside words, other letters
    ("search-case-upper", '{"query": "DEPLOY"}'),
    ("search-case-accents-upper", '{"query": "CRÈME BRÛLÉE"}'),
    ("search-accents", '{"query": "crème"}'),
    ("search-accents-stripped", '{"query": "creme"}'),
    ("search-accents-combining", '{"query": "cre\u0300me"}'),
    ("search-accents-oe-ligature", '{"query": "œuvre"}'),
    ("search-dotted-capital-i", '{"query": "İSTANBUL"}'),
    ("search-dotless-i", '{"query": "\u0131spanak"}'),
    ("search-greek-only", '{"query": "ΣΟΦΊΑ σοφία"}'),
    ("search-greek-between-words", '{"query": "fourΣvanille"}'),
    ("search-sharp-s", '{"query": "STRAßE"}'),
    ("search-kelvin-sign", '{"query": "\u212aELVIN"}'),
    ("search-angstrom-sign", '{"query": "ÅNGSTRÖM"}'),
    ("search-ligature-fi", '{"query": "ﬁle"}'),
    ("search-titlecase-dz", '{"query": "ǅEMAL"}'),
    ("search-dotted-capital-i-short", '{"query": "İS"}'),
    ("search-division-sign-kept", '{"query": "6÷3"}'),
    ("search-multiplication-sign-cuts", '{"query": "6\u00d73"}'),
    # the bounds of the term runes: a-z, 0-9, U+00E0-U+00FF (a rune inside joins, outside cuts)
    ("search-term-rune-z-joins", '{"query": "qzdeploy"}'),
    ("search-term-rune-brace-cuts", '{"query": "deploy{q"}'),
    ("search-term-rune-0-joins", '{"query": "q0deploy"}'),
    ("search-term-rune-9-joins", '{"query": "q9deploy"}'),
    ("search-term-rune-slash-cuts", '{"query": "deploy/q"}'),
    ("search-term-rune-colon-cuts", '{"query": "deploy:q"}'),
    ("search-term-rune-a-grave-joins", '{"query": "qàdeploy"}'),
    ("search-term-rune-y-diaeresis-joins", '{"query": "qÿdeploy"}'),
    ("search-term-rune-sharp-s-cuts", '{"query": "deployßq"}'),
    # underscore cuts, punctuation
    ("search-underscore-cuts", '{"query": "snake_case_identifier"}'),
    ("search-underscore-short-parts", '{"query": "MAX_RETRY_COUNT"}'),
    ("search-version-digits", '{"query": "v1.2.3"}'),
    ("search-email", '{"query": "e-mail@example.com"}'),
    ("search-punctuation", '{"query": "«deploy», (nightly)! — failed?"}'),
    ("search-repeated-terms", '{"query": "deploy Deploy DEPLOY nightly deploy"}'),
    ("search-html-query", '{"query": "<div class=\\"note\\">"}'),
    ("search-html-entity-query", '{"query": "&amp;"}'),
    ("search-line-separator-query", '{"query": "line\\u2028separator"}'),
    ("search-quotes-in-query", '{"query": "\\"nightly\\" \'release\' `web`"}'),
    ("search-nul-in-query", '{"query": "deploy\\u0000nightly"}'),
    # scores and order
    ("search-label-and-content", '{"query": "release notes", "limit": 20}'),
    ("search-score-order", '{"query": "deploy failed", "limit": 20}'),
    ("search-equal-scores-by-seq", '{"query": "nightly", "limit": 20}'),
    # bounded excerpts
    ("search-excerpt-161-runes", '{"query": "chaussures"}'),
    ("search-excerpt-160-runes", '{"query": "padding"}'),
    ("search-excerpt-entities-cut", '{"query": "quoted"}'),
    ("search-excerpt-after-blank-lines", '{"query": "blank lines"}'),
    ("search-excerpt-empty-block", '{"query": "empty"}'),
    ("search-excerpt-controls", '{"query": "windows"}'),
    ("search-excerpt-html", '{"query": "jerry"}'),
    ("search-excerpt-first-line-empty", '{"query": "kiwi"}'),
    ("search-y-diaeresis-both-cases", '{"query": "HAŸ"}'),
    # code points newer than Unicode 15.0.0, and case pairs new in Unicode 16 and 17
    ("search-unicode-16-emoji", '{"query": "café \U0001fae9"}'),
    ("search-unicode-16-case-pairs", '{"query": "\u1c89CAFÉ \ua7cbTIRED \ua7dc"}'),
    ("search-unicode-17-case-pair", '{"query": "eyes\U00016ea0"}'),
    ("search-unicode-16-no-terms", '{"query": "\U0001fae9 \u1c89\u1c8a \U00010d50"}'),
    # limits
    ("search-limit-default", '{"query": "deploy"}'),
    ("search-limit-one", '{"query": "deploy", "limit": 1}'),
    ("search-limit-truncated", '{"query": "deploy", "limit": 2.9}'),
    ("search-limit-negative-fraction", '{"query": "deploy", "limit": -0.9}'),
    ("search-limit-negative", '{"query": "deploy", "limit": -3}'),
    ("search-limit-zero", '{"query": "deploy", "limit": 0}'),
    ("search-limit-max", '{"query": "deploy", "limit": 20}'),
    ("search-limit-above-max", '{"query": "deploy", "limit": 21}'),
    ("search-limit-exponent", '{"query": "deploy", "limit": 1.5e1}'),
    ("search-limit-huge", '{"query": "deploy", "limit": 1e300}'),
    ("search-limit-past-int64", '{"query": "deploy", "limit": 9223372036854775807}'),
    ("search-limit-as-text", '{"query": "deploy", "limit": "1"}'),
    ("search-limit-null", '{"query": "deploy", "limit": null}'),
    ("search-limit-bool", '{"query": "deploy", "limit": true}'),
    ("search-limit-out-of-float-range", '{"query": "deploy", "limit": 1e400}'),
    ("search-limit-repeated-key", '{"query": "deploy", "limit": 1, "limit": 3}'),
    ("search-limit-nineteen", '{"query": "deploy", "limit": 19}'),
    ("search-limit-above-2-pow-62", '{"query": "deploy", "limit": 5e18}'),
    ("search-limit-leading-zero", '{"query": "deploy", "limit": 01}'),
    # the JSON grammar: layout, members, nested values, numbers, escapes
    ("search-args-compact", '{"query":"deploy","limit":2,"x":[1,[2,3],{"a":1,"b":[]}],"y":{}}'),
    ("search-args-trailing-char", '{"query": "deploy"}x'),
    ("search-args-no-opening-brace", 'x"query": "deploy"}'),
    ("search-args-semicolon-for-colon", '{"query";"deploy"}'),
    ("search-args-escaped-key", '{"\\u0071uery": "deploy"}'),
    ("search-args-number-key", '{"query": "deploy", 1: 2}'),
    ("search-args-false-member", '{"query": "deploy", "x": false}'),
    ("search-args-bad-literal", '{"query": "deploy", "x": nul}'),
    ("search-args-bad-number", '{"query": "deploy", "x": -:1}'),
    ("search-args-raw-nul", '{"query": "deploy\x00"}'),
    ("search-args-raw-nul-after-escape", '{"query": "deploy\\t\x00"}'),
    ("search-args-bad-value", '{"query": "deploy", "x": @}'),
    ("search-args-short-hex-escape", '{"query": "deploy", "x": "\\u00eZ"}'),
    ("search-args-hex-escape-slash", '{"query": "deploy", "x": "\\u00/0"}'),
    ("search-args-hex-escape-colon", '{"query": "deploy", "x": "\\u00:0"}'),
    ("search-args-hex-escape-backquote", '{"query": "deploy", "x": "\\u00`0"}'),
    ("search-args-hex-escape-g", '{"query": "deploy", "x": "\\u00g0"}'),
    ("search-args-hex-escape-at", '{"query": "deploy", "x": "\\u00@0"}'),
    ("search-args-hex-escape-capital-g", '{"query": "deploy", "x": "\\u00G0"}'),
    ("search-args-number-slash", '{"query": "deploy", "x": 1/2}'),
    ("search-args-number-colon", '{"query": "deploy", "x": 1:2}'),
    ("search-args-fraction-slash", '{"query": "deploy", "x": 1./}'),
    ("search-args-fraction-colon", '{"query": "deploy", "x": 1.:}'),
    ("search-args-exponent-slash", '{"query": "deploy", "x": 1e/}'),
    ("search-args-exponent-colon", '{"query": "deploy", "x": 1e:}'),
    (
        "search-args-nested-values",
        '{"query": "deploy", "x": [0, 9, 10, 19, 1.0, 1.9, 1e0, 1e9, -1.5E+3, "s\\"]\\u00e9",'
        ' true, false, null, {"k": [{}], "j": {"a": 0}}, []], "y": {}}',
    ),
    ("search-args-nested-trailing-comma", '{"query": "deploy", "x": [1, 2,]}'),
    ("search-args-nested-missing-comma", '{"query": "deploy", "x": [1 2]}'),
    ("search-args-nested-object-trailing-comma", '{"query": "deploy", "x": {"a": 1,}}'),
    ("search-args-nested-missing-colon", '{"query": "deploy", "x": {"a" 1}}'),
    ("search-args-nested-number-key", '{"query": "deploy", "x": {1: 2}}'),
    ("search-args-nested-bad-literal", '{"query": "deploy", "x": [tru]}'),
    ("search-args-nested-bad-number", '{"query": "deploy", "x": [-]}'),
    ("search-args-nested-control-char", '{"query": "deploy", "x": ["a\x01b"]}'),
    ("search-args-nested-mismatched-close", '{"query": "deploy", "x": [1}'),
    ("search-args-nested-bad-value", '{"query": "deploy", "x": [@]}'),
    ("search-args-nested-unclosed-string", '{"query": "deploy", "x": ["abc]}'),
    # nesting: Go's decoder allows 10000 levels
    ("search-nesting-at-limit", _deep(9999)),
    ("search-nesting-past-limit", _deep(10000)),
    # no result; the locked block never matches
    ("search-no-result", '{"query": "zzyzx"}'),
    ("search-locked-never-matches", '{"query": "unicorn zebra"}'),
)

# The seqs that calls cite as plain digits and that recall reads: block 1 is absent
# only while the first seq is above 1, r999999 while the sequence has not reached it.
_LITERAL_SEQS: dict[str, tuple[int, ...]] = {
    "recall-id-absent-block": (999999,),
    "recall-id-below-first": (1,),
    "recall-id-max-int64": (9223372036854775807,),
}

CALLS: tuple[CorpusCall, ...] = tuple(
    [CorpusCall(case, "recall", args, _LITERAL_SEQS.get(case, ())) for case, args in _RECALL]
    + [CorpusCall(case, "recall_search", args) for case, args in _SEARCH]
)

# The cases `parity adopt` took from the shadow's divergences, archived after the rest.
BLOCKS += recall_adopted.BLOCKS
CALLS += recall_adopted.CALLS


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def symbolic_args(tool: str, args: str, names: Mapping[int, str]) -> str:
    """``args`` with each seq of ``names`` that a ``recall`` string cites in decimal
    (leading zeros kept) written ``{{seq:NAME}}``; a search's args are left alone."""
    if tool != "recall" or not names:
        return args
    digits = {str(seq): name for seq, name in names.items()}
    alternatives = "|".join(map(re.escape, digits))
    number = re.compile(r"(?<![0-9])(0*)(" + alternatives + r")(?![0-9])")

    def in_string(match: re.Match[str]) -> str:
        return number.sub(lambda m: m.group(1) + "{{seq:" + digits[m.group(2)] + "}}", match[0])

    return _JSON_STRING.sub(in_string, args)


def plain_id_seq(args: str) -> int | None:
    """The seq an args text's ``id`` cites, read leniently (Python's JSON), if any."""
    try:
        value = json.loads(args)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        return None
    digits = value["id"].strip().lstrip("rR").strip()
    return int(digits) if digits.isascii() and digits.isdigit() else None


def _host(base_url: str, **options: Any) -> ToolHost:
    from recall import GoTurnHost  # imported late: the replay starts fast

    return GoTurnHost(base_url, **options)


# --- where the texts print seqs -------------------------------------------------------

_NOT_FOUND = "no archived block "
_NO_MATCH = "no archived block matches "
_RESULTS_RE = re.compile(r"[0-9]+ of [0-9]+ matching blocks for ")
_HEADER_RE = re.compile(r"\[r([0-9]+)\]")
_SCORE_RE = re.compile(r" \(score [0-9]+\)")
# strconv.Quote's output: one token per rune, escaped or as itself.
_TOKEN = r'\\(?:[abfnrtv\\"]|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})|[^\\"]'
_TOKEN_RE = re.compile(_TOKEN)
_QUOTED_RE = re.compile(f'"((?:{_TOKEN})*)"')
_SHORT = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_SHORT |= {"\\": "\\", '"': '"'}


def _rune(token: str) -> str:
    """The rune one token of a Go-quoted string stands for."""
    if not token.startswith("\\"):
        return token
    kind = token[1]
    return chr(int(token[2:], 16)) if kind in "xuU" else _SHORT[kind]


def _quoted_sites(
    output: str, start: int, end: int, key: str, template: str | None, seqs: Mapping[str, int]
) -> list[SeqSite]:
    """The seqs that ``output[start:end]``, the args' ``key`` quoted back with %q, prints
    where the args template cites ``{{seq:NAME}}``; none unless that quote is exactly
    the template's string with this recording's seqs, rune for rune."""
    match = _QUOTED_RE.fullmatch(output, start, end)
    if template is None or match is None or "{{seq:" not in template:
        return []
    try:
        args = json.loads(template)
    except ValueError:
        return []
    value = args.get(key) if isinstance(args, dict) else None
    if not isinstance(value, str):
        return []
    value = replace_surrogates(value)  # as Go decodes a lone surrogate escape
    tokens = list(_TOKEN_RE.finditer(output, match.start(1), match.end(1)))
    sites: list[SeqSite] = []
    i = 0
    for j, piece in enumerate(split_template(value)):
        is_slot = j % 2 == 1
        if is_slot and piece not in seqs:
            return []
        runes = str(seqs[piece]) if is_slot else piece
        chunk = tokens[i : i + len(runes)]
        if len(chunk) != len(runes) or any(
            _rune(t.group()) != r for t, r in zip(chunk, runes, strict=True)
        ):
            return []
        if is_slot and runes:
            sites.append(SeqSite(chunk[0].start(), chunk[-1].end(), piece))
        i += len(runes)
    return sites if i == len(tokens) else []


def _result_sites(output: str, pos: int, labels: Mapping[int, str]) -> list[SeqSite]:
    """The headers of a ``recall_search`` result's entries from ``pos``: each
    ``"\\n" + header(b) + " (score S)"``, then ``"\\n  " + excerpt`` (one line); the label
    read from the block whose seq the header prints. Parsing stops at what it does not
    understand: what follows is compared as it is."""
    sites: list[SeqSite] = []
    while output.startswith("\n[r", pos):
        header = _HEADER_RE.match(output, pos + 1)
        if header is None:
            break
        label = labels.get(int(header.group(1)))
        if label is None:
            break
        sites.append(SeqSite(header.start(1), header.end(1)))
        pos = header.end()
        if label:
            if not output.startswith(" " + label, pos):
                break
            pos += 1 + len(label)
        score = _SCORE_RE.match(output, pos)
        if score is None:
            break
        pos = score.end()
        if output.startswith("\n  ", pos):
            newline = output.find("\n", pos + 3)
            pos = len(output) if newline < 0 else newline
    return sites


def printed_seqs(
    tool: str,
    output: str,
    *,
    template: str | None,
    seqs: Mapping[str, int],
    labels: Mapping[int, str],
) -> list[SeqSite]:
    """Where a ``recall`` or ``recall_search`` output prints seqs (``Corpus.printed_seqs``)."""
    if tool == "recall":
        header = _HEADER_RE.match(output)
        if header is not None and output.startswith(("\n", " "), header.end()):
            return [SeqSite(header.start(1), header.end(1))]
        if output.startswith(_NOT_FOUND):
            return _quoted_sites(output, len(_NOT_FOUND), len(output), "id", template, seqs)
        return []
    if tool != "recall_search":
        return []
    if output.startswith(_NO_MATCH):
        return _quoted_sites(output, len(_NO_MATCH), len(output), "query", template, seqs)
    first = _RESULTS_RE.match(output)
    if first is None:
        return []
    newline = output.find("\n")
    line_end = len(output) if newline < 0 else newline
    if not output.startswith(":", line_end - 1):
        return []
    quoted = _quoted_sites(output, first.end(), line_end - 1, "query", template, seqs)
    return quoted + _result_sites(output, line_end, labels)


CORPUS = Corpus(
    name="recall",
    blocks=BLOCKS,
    calls=CALLS,
    host=_host,
    tools=frozenset({"recall", "recall_search"}),
    printed_seqs=printed_seqs,
)
