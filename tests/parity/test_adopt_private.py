"""A divergence found on private text reaches the repository as a minimal case only.

The port carries a planted defect (behind this file's monkeypatch: a tab in an
excerpt shown as a space); the archive is 50 blocks of random words that no file
holds. The shadow finds the divergence; what it logs and writes by default holds no
12-character run of that text, the opt-in full form does. ``parity adopt`` shrinks
it against the Go reference into a case of at most 2 blocks and a few hundred
characters, with none of the private text beyond what the divergence needs; recorded
(`make golden`, `parity review --accept-all`, on a copy of a few cases of the journal),
the replay fails on the port, on that case alone, until the defect is gone.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import random
import re
import shutil
import string
from pathlib import Path

import pytest

from parity import journal
from parity.adopt import case_of
from parity.corpus import Corpus, get_corpus
from parity.fixtures.go import FreshGo
from parity.record import run_record
from parity.replay import Replayer
from parity.review import run_review
from parity.shrink import Case, ddmin, shrink
from recall import Divergence, GoTurnHost, Shadow
from recall import _tools as tools

from .conftest import GOLDEN, RunCli, SmallGolden
from .test_adopt import FEW, divergence, load_module

TOKEN = "tok-private-SECRET"
RUN = 12
"""The length of a run of private text that must not leave the process by default."""


def private_archive(rng: random.Random) -> list[tuple[str, str]]:
    """50 blocks of random lowercase words; block 23's first line holds a tab."""

    def word() -> str:
        return "".join(rng.choices(string.ascii_lowercase, k=rng.randint(6, 10)))

    def line() -> str:
        return " ".join(word() for _ in range(8))

    blocks = [(f"{word()} {word()}", "\n".join(line() for _ in range(6))) for _ in range(50)]
    label, content = blocks[23]
    first, rest = content.split("\n", 1)
    words = first.split(" ")
    blocks[23] = (label, " ".join(words[:3]) + "\t" + " ".join(words[3:]) + "\n" + rest)
    return blocks


def excerpt_tab_as_space(content: str) -> str:
    """The planted defect: the excerpt shows a tab as a space."""
    return EXCERPT(content).replace("\t", " ")


EXCERPT = tools.excerpt


def runs(text: str) -> set[str]:
    return {text[i : i + RUN] for i in range(len(text) - RUN + 1)}


def leaked(private: list[str], text: str) -> list[str]:
    """The runs of private text that ``text`` holds."""
    return sorted(run for t in private for run in runs(t) if run in text)


@pytest.mark.go
def test_a_private_divergence_is_adopted_shrunk_and_fails_the_replay_until_fixed(
    fresh_go: FreshGo,
    small_golden: SmallGolden,
    maintainer: None,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: RunCli,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="recall.shadow")
    golden = GOLDEN.read_bytes()
    rng = random.Random(22)
    blocks = private_archive(rng)
    private = [text for block in blocks for text in block]
    query = " ".join(b[1].split()[1] for b in (blocks[7], blocks[23], blocks[41]))
    corpus = get_corpus("recall")
    assert not any(leaked(private, b.label + "\0" + b.content) for b in corpus.blocks)

    # live traffic on a production-like Go, the port defective
    monkeypatch.setattr(tools, "excerpt", excerpt_tab_as_space)
    go = fresh_go(first_seq=5000, token=TOKEN, debug=False)
    for label, content in blocks:
        go.archive(label, content)
    local = tmp_path / "divergences.jsonl"  # stays on the operator's machine
    shipped: list[str] = []  # what a log pipeline would get
    found: list[Divergence] = []

    def sink(d: Divergence) -> None:
        found.append(d)
        shipped.append(d.to_json())
        with local.open("a") as file:
            file.write(d.to_json(include_private_data=True) + "\n")

    with GoTurnHost(go.base_url, token=TOKEN, shadow=Shadow(rate=1.0, on_divergence=sink)) as host:
        host.exec_tool("recall_search", json.dumps({"query": query}))
        host.exec_tool("recall_search", json.dumps({"query": "nothing here"}))
    [divergence] = found
    assert len(divergence.blocks) >= 2  # the query matches three blocks; all are kept
    log = [r.getMessage() for r in caplog.records]
    assert [m for m in log if m.startswith("divergence: ")]

    # by default, nothing of the text leaves: not the log, the JSON line, the repr
    for text in (*log, *shipped, repr(divergence)):
        assert leaked([*private, query], text) == []
        assert "SECRET" not in text
        assert go.base_url not in text
    redacted = json.loads(shipped[0])
    assert redacted["redacted"] is True
    assert redacted["seqs_read"] == [b.seq for b in divergence.blocks]
    assert redacted["first_difference"]["go"].count("\t") == 1
    # the opt-in form is the whole case
    full = local.read_text()
    assert leaked(private, full)
    assert blocks[23][1] in {b.content for b in Divergence.from_json(full).blocks}
    assert "SECRET" not in full

    # parity adopt shrinks it against the Go reference, into a copy of the adopted module
    module = tmp_path / "recall_adopted.py"
    from parity.corpora import recall_adopted

    shutil.copy(recall_adopted.__file__, module)
    status, out, err = run_cli("adopt", str(local), "--module", str(module))
    assert (status, err) == (0, ""), out
    adopted_blocks, calls = load_module(module)
    [call] = calls
    assert len(adopted_blocks) <= 2
    adopted = "".join(b.source() for b in adopted_blocks) + call.source()
    assert len("".join(b.label + b.content for b in adopted_blocks) + call.args) < 300
    assert len(adopted) < 700
    assert "\t" in "".join(b.content for b in adopted_blocks)  # what the divergence needs
    assert leaked([*private, query], module.read_text()) == []
    assert re.search(r"shrunk: blocks [2-9] -> 1, characters [0-9]+ -> [0-9]{1,2},", call.note)
    assert call.note in out

    # recorded from the reference on a copy of the journal, accepted: the replay fails
    # on the defective port, on the adopted case alone, and passes once it is fixed
    small = small_golden(*FEW)  # a few cases that show excerpts, beside the adopted one
    wide: Corpus = dataclasses.replace(
        small.corpus, blocks=small.corpus.blocks + adopted_blocks, calls=small.corpus.calls + calls
    )
    path = tmp_path / "recall.json"
    shutil.copy(small.path, path)
    said = io.StringIO()
    assert run_record(wide, journal_path=str(path), go=None, check=False, out=said)
    assert run_review(
        wide, journal_path=str(path), decide="accept", answers=io.StringIO(), out=said
    ) == (0), said.getvalue()
    recorded = journal.load(path)
    with Replayer(recorded, wide) as replayer:
        assert {r.case for r in replayer.replay().failures} == {call.case}
    monkeypatch.undo()
    with Replayer(recorded, wide) as replayer:
        result = replayer.replay()
    assert (result.failed, result.passed) == (0, len(wide.calls))
    assert GOLDEN.read_bytes() == golden  # the repository's golden is untouched


@pytest.mark.go
def test_adopt_says_when_the_go_does_not_reproduce(
    fresh_go: FreshGo, run_cli: RunCli, tmp_path: Path
) -> None:
    # a divergence seen in production that the reference does not give: the port is
    # right here (no defect planted), so Go and port agree on the case
    go = fresh_go(first_seq=10)
    seq = go.archive("notes", "nothing odd")
    found = divergence(
        "recall", json.dumps({"id": f"r{seq}"}), (tools.Block(seq, "notes", "nothing odd"),)
    )
    line = found.to_json(include_private_data=True)
    path = tmp_path / "d.jsonl"
    path.write_text(line + "\n")
    module = tmp_path / "adopted.py"
    status, out, err = run_cli("adopt", str(path), "--module", str(module), "--go-url", go.base_url)
    assert (status, err) == (0, "")
    assert f"the Go at {go.base_url} does not reproduce it" in out
    assert "left out (--keep-unreproduced adopts it as it was)" in out
    assert not module.exists()
    status, out, _ = run_cli("adopt", str(path), "--module", str(module), "--keep-unreproduced")
    assert status == 0
    assert (
        "the Go reference does not reproduce it over the corpus's blocks (the Go that answered"
        " in production behaves unlike the reference: drift of the reference, a finding of its"
        " own): adopted as it was, unshrunk (--keep-unreproduced)" in out
    )
    [call] = load_module(module)[1]
    assert call.note == "not reproduced by the Go reference; not shrunk"

    production = fresh_go(debug=False)  # no debug routes: it cannot be emptied and filled
    status, out, err = run_cli("adopt", str(path), "--go-url", production.base_url)
    assert status == 2
    assert f"the Go at {production.base_url} has no debug routes" in err


def test_ddmin_finds_a_one_minimal_subset() -> None:
    needed = {3, 17, 18}
    found = ddmin(list(range(40)), lambda items: needed <= set(items))
    assert found == [3, 17, 18]
    assert ddmin([1, 2], lambda items: True) == []


def test_shrink_leaves_what_the_divergence_needs_and_fills_the_rest() -> None:
    # a stand-in oracle: the case diverges while some block's content holds "ab"
    # followed, two characters on, by a tab
    def diverges(case: Case) -> bool:
        return any(
            "ab" in content and "\t" in content[content.index("ab") :][2:4]
            for _, content in case.blocks
        )

    case = Case(
        "recall_search",
        json.dumps({"query": "quartz ab"}),
        (("first", "lorem ipsum"), ("second", "more words\nzz abcd\tmore\nlast line")),
    )
    shrunk = shrink(case, diverges)
    assert shrunk.case.blocks == (("", "ab\t"),)
    assert json.loads(shrunk.case.args) == {"query": ""}
    assert shrunk.summary().startswith("shrunk: blocks 2 -> 1, characters ")
    assert case_of(divergence("recall", '{"id": "r7"}', (tools.Block(7, "l", "c"),))) == Case(
        "recall", '{"id": "r{{seq:b0}}"}', (("l", "c"),)
    )
