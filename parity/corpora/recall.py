"""The recall corpus: the blocks and calls that the golden journal records from Go.

It covers every bullet of the contract's "golden journal" section: 38 readable
blocks (accents and Unicode case, HTML tags and entities, an empty block, long
first lines, twenty-five similar blocks, code points of Unicode 16 and 17) plus a
locked one, and the calls of both tools (data: ``recall_calls.toml``): those whose
outputs differ between the Unicode versions of the Go releases the port matches among
them. ``{{seq:NAME}}`` in args stands for the seq the Go gave block ``NAME``.

``printed_seqs`` says where the two tools' texts (the contract's "The texts") print
a seq: a block's header (``[r1000] label``: the first line of ``recall``'s block
text; each entry of a ``recall_search`` result, found through the blocks' labels),
and an id or query quoted back with ``%q`` where the args cite ``{{seq:NAME}}``.

The cases ``parity adopt`` took from the shadow's divergences (``recall_adopted``,
generated) come last, their blocks archived after the others.
"""

from __future__ import annotations

import codecs
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parity.corpora import recall_adopted
from parity.corpus import Corpus, CorpusBlock, CorpusCall, SeqSite, ToolHost, split_template
from recall._tools import replace_surrogates

__all__ = ["BLOCKS", "CALLS", "CORPUS", "plain_id_seq", "printed_seqs", "symbolic_args"]


def _fill(prefix: str, runes: int, pad: str) -> str:
    """``prefix`` padded with ``pad`` to exactly ``runes`` code points."""
    return (prefix + pad * runes)[:runes]


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


CALLS_PATH = Path(__file__).with_name("recall_calls.toml")


def _calls() -> tuple[CorpusCall, ...]:
    """The calls of ``recall_calls.toml``, in its order (its header says the format)."""
    calls: list[CorpusCall] = []
    for tool, cases in tomllib.loads(CALLS_PATH.read_text(encoding="utf-8")).items():
        for case, spec in cases.items():
            if isinstance(spec, str):
                spec = {"args": spec}
            depth = spec.get("nested", 0)
            arrays = "[" * depth + "]" * depth
            if spec.get("in_object", False):
                arrays = '{"a": ' + arrays + "}"
            args = spec.get("args", '{"query": "deploy", "x": ' + arrays + "}")
            calls.append(CorpusCall(case, tool, args, tuple(spec.get("literal_seqs", ()))))
    return tuple(calls)


CALLS: tuple[CorpusCall, ...] = _calls()

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


def _rune(token: str) -> str:
    """The rune one token of a Go-quoted string stands for (its escapes are Python's)."""
    return codecs.decode(token, "unicode_escape") if token.startswith("\\") else token


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
    quoted = "".join(_rune(t.group()) for t in tokens)  # a rune a token
    sites: list[SeqSite] = []
    i = 0
    for j, piece in enumerate(split_template(value)):
        is_slot = j % 2 == 1
        if is_slot and piece not in seqs:
            return []
        runes = str(seqs[piece]) if is_slot else piece
        if quoted[i : i + len(runes)] != runes:
            return []
        if is_slot and runes:
            sites.append(SeqSite(tokens[i].start(), tokens[i + len(runes) - 1].end(), piece))
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
