"""``parity adopt``: the shadow's divergences into corpus cases, and the whole round trip:
a divergence written by the host, adopted, recorded from the Go reference (`make
golden`, `parity review --accept-all`), and the replay failing on the diverging port
until it is fixed."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import shutil
from pathlib import Path

import pytest

from parity import journal
from parity.adopt import adopt, load_divergences, module_source
from parity.corpus import Corpus, CorpusBlock, CorpusCall, get_corpus
from parity.errors import ParityError
from parity.fixtures.go import FreshGo
from parity.record import run_record
from parity.replay import Replayer, check_consistency
from parity.review import run_review
from recall import Block, Divergence, GoTurnHost, Shadow
from recall import _tools as tools

from .conftest import RunCli, SmallGolden

TOKEN = "tok-adopt-SECRET"


def divergence(
    name: str, args: str, blocks: tuple[Block, ...], complete: bool = True
) -> Divergence:
    return Divergence(
        name=name,
        args=args,
        primary="python",
        go_output="go",
        python_output="port",
        python_error=None,
        blocks=blocks,
        complete=complete,
    )


def load_module(path: Path) -> tuple[tuple[CorpusBlock, ...], tuple[CorpusCall, ...]]:
    spec = importlib.util.spec_from_file_location("adopted_under_test", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.BLOCKS, module.CALLS


CORPUS = get_corpus("recall")
FEW = ("recall-id-plain", "recall-id-zero", "search-limit-one", "search-accents")
"""Corpus cases whose outputs print block headers, recorded beside the adopted cases (the
point is what the adopted cases catch, not the whole golden)."""
ACCENTS = next(b for b in CORPUS.blocks if b.name == "accents")
KIWI = next(b for b in CORPUS.blocks if b.name == "blank-first-line")


def test_a_recall_case_cites_its_block_symbolically() -> None:
    found = divergence("recall", '{"id": " r0077"}', (Block(77, "new", "block"),))
    adoption = adopt([found], CORPUS.blocks, CORPUS.calls)
    [block] = adoption.blocks
    [call] = adoption.calls
    assert (block.label, block.content, block.locked) == ("new", "block", False)
    assert call.tool == "recall"
    assert call.args == '{"id": " r00{{seq:' + block.name + '}}"}'
    assert call.resolve({block.name: 1000}) == '{"id": " r001000"}'
    assert call.literal_seqs == ()


def test_blocks_already_in_the_corpus_are_reused_in_order() -> None:
    # the corpus archives accents before kiwi: reused, they keep the live order
    inorder = (Block(5, ACCENTS.label, ACCENTS.content), Block(9, KIWI.label, KIWI.content))
    adoption = adopt(
        [divergence("recall_search", '{"query": "kiwi crème"}', inorder)],
        CORPUS.blocks,
        CORPUS.calls,
    )
    assert adoption.blocks == []
    # the other way round, kiwi reused and a new copy of accents after it
    reversed_ = (Block(5, KIWI.label, KIWI.content), Block(9, ACCENTS.label, ACCENTS.content))
    adoption = adopt(
        [divergence("recall_search", '{"query": "kiwi crème"}', reversed_)],
        CORPUS.blocks,
        CORPUS.calls,
    )
    assert [(b.label, b.content) for b in adoption.blocks] == [(ACCENTS.label, ACCENTS.content)]
    # a new block before a known one: both new, in seq order
    adoption = adopt(
        [
            divergence(
                "recall_search",
                '{"query": "kiwi zz"}',
                (Block(3, "zz", "zz"), Block(4, KIWI.label, KIWI.content)),
            )
        ],
        CORPUS.blocks,
        CORPUS.calls,
    )
    assert [b.label for b in adoption.blocks] == ["zz", KIWI.label]


def test_a_case_already_in_the_corpus_or_the_file_is_not_added_again() -> None:
    # the corpus's recall-id-plain: the id of its accents block, seen under seq 5
    existing = divergence("recall", '{"id": "r5"}', (Block(5, ACCENTS.label, ACCENTS.content),))
    seen_twice = divergence("recall_search", '{"query": "new words"}', (Block(8, "new", "words"),))
    adoption = adopt([existing, seen_twice, seen_twice], CORPUS.blocks, CORPUS.calls)
    [call] = adoption.calls
    assert call.args == '{"query": "new words"}'
    assert adoption.present == ["recall-id-plain", call.case]
    assert len(adoption.blocks) == 1


def test_notes_say_what_may_not_reproduce() -> None:
    adoption = adopt(
        [
            divergence("recall", '{"id": "r42"}', ()),
            divergence("recall_search", '{"query": "kiwi trees"}', (Block(9, "x", "kiwi"),), False),
        ],
        CORPUS.blocks,
        CORPUS.calls,
    )
    notes = "\n".join(adoption.notes)
    absent, search = adoption.calls
    assert absent.literal_seqs == (42,)
    assert f"{absent.case}: the id cites seq 42, which the port read absent" in notes
    assert f"{search.case}: the host kept only some of the blocks that mattered" in notes
    assert f"{search.case}: the query also matches 1 corpus blocks (blank-first-line)" in notes
    assert (
        "the new blocks also match the queries of 1 existing cases"
        " (search-excerpt-first-line-empty)" in notes
    )


def test_the_printed_cases_are_ready_to_paste() -> None:
    found = divergence("recall", '{"id": "r7"}', (Block(7, "é\u2028", "a\n'\"b"),))
    adoption = adopt([found], CORPUS.blocks, CORPUS.calls)
    lines = [line for line in adoption.source().splitlines() if not line.startswith("#")]
    namespace = {"CorpusBlock": CorpusBlock, "CorpusCall": CorpusCall}
    assert eval("[" + "\n".join(lines) + "]", namespace) == adoption.blocks + adoption.calls


@pytest.mark.go
def test_cli_prints_writes_and_refuses_a_bad_line(
    run_cli: RunCli, tmp_path: Path, fresh_go: FreshGo
) -> None:
    go = ("--go-url", fresh_go().base_url, "--keep-unreproduced")  # no Go diverges here
    found = [
        divergence("recall", '{"id": "r7"}', (Block(7, "new", "block"),)),
        divergence("recall_search", '{"query": "unseen words"}', (Block(7, "new", "block"),)),
    ]
    path = tmp_path / "divergences.jsonl"
    path.write_text("".join(d.to_json(include_private_data=True) + "\n\n" for d in found))
    module = tmp_path / "adopted.py"

    status, out, err = run_cli("adopt", str(path), *go)
    assert (status, err) == (0, "")
    assert out.startswith(f"{path}: 2 divergences\ndivergence 1 (recall): the Go at ")
    assert "\n# 2 new cases (0 already in the corpus)\n" in out
    assert not module.exists()

    status, out, err = run_cli("adopt", str(path), "--module", str(module), *go)
    assert (status, err) == (0, "")
    assert f"wrote {module}: 1 blocks and 2 calls added" in out
    blocks, calls = load_module(module)
    assert [b.label for b in blocks] == ["new"]
    assert [c.tool for c in calls] == ["recall", "recall_search"]
    assert module.read_text() == module_source(blocks, calls)

    status, out, _ = run_cli("adopt", str(path), "--module", str(module), *go)  # nothing new
    assert status == 0
    assert "# 0 new cases (2 already in the corpus)" in out
    assert load_module(module) == (blocks, calls)

    cut = tmp_path / "cut.jsonl"
    cut.write_text(
        found[0].to_json(include_private_data=True)
        + "\n"
        + found[1].to_json(include_private_data=True)[:-20]
    )
    status, out, err = run_cli("adopt", str(cut), "--module", str(module), *go)
    assert status == 2
    assert err.startswith(
        f"parity: error: {cut}:2: not a divergence (the last line, without its newline:"
        " cut short?): not JSON (truncated?): "
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "recall"}\n')
    with pytest.raises(
        ParityError,
        match=r"bad.jsonl:1: not a divergence: a JSON object with 'divergence' is expected$",
    ):
        load_divergences(bad)


def test_the_committed_adopted_module_is_what_adopt_writes() -> None:
    from parity.corpora import recall_adopted

    path = Path(recall_adopted.__file__)
    assert path.read_text() == module_source(recall_adopted.BLOCKS, recall_adopted.CALLS)
    assert CORPUS.blocks[-len(recall_adopted.BLOCKS) or len(CORPUS.blocks) :] == (
        recall_adopted.BLOCKS
    )


# The round trip.


def broken_header(block: Block) -> str:
    """The diverging port: a label's "|" shown as "/" (no corpus label holds one)."""
    label = block.label.replace("|", "/")
    return f"[r{block.seq}] {label}" if label else f"[r{block.seq}]"


@pytest.mark.go
def test_round_trip_from_live_divergences_to_a_failing_replay(
    fresh_go: FreshGo,
    small_golden: SmallGolden,
    maintainer: None,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: RunCli,
    tmp_path: Path,
) -> None:
    assert not any("|" in b.label for b in CORPUS.blocks)
    monkeypatch.setattr(tools, "header", broken_header)
    # live traffic: a production-like Go, its own seqs
    go = fresh_go(first_seq=77, token=TOKEN, debug=False)
    piped = go.archive("build | ship", "artefacts uploaded")
    plain = go.archive("notes", "nothing piped")
    found = tmp_path / "divergences.jsonl"
    with (
        found.open("w") as sink,
        GoTurnHost(
            go.base_url,
            token=TOKEN,
            shadow=Shadow(
                rate=1.0,
                on_divergence=lambda d: sink.write(d.to_json(include_private_data=True) + "\n"),
            ),
        ) as host,
    ):
        for args in (f"r{piped}", f"R{piped}", f"r{plain}", "r1"):
            host.exec_tool("recall", json.dumps({"id": args}))
        for query in ("artefacts", "nothing", "zzyzx"):
            host.exec_tool("recall_search", json.dumps({"query": query}))
    assert host.shadow_stats()["diverged"] == 3
    assert TOKEN not in found.read_text()

    # parity adopt, into a copy of the adopted module
    module = tmp_path / "recall_adopted.py"
    from parity.corpora import recall_adopted

    shutil.copy(recall_adopted.__file__, module)
    status, out, _ = run_cli("adopt", str(found), "--module", str(module))
    assert status == 0, out
    blocks, calls = load_module(module)  # shrunk: a label's "|" is all the defect needs
    assert all("|" in b.label and len(b.label + b.content) <= 12 for b in blocks)
    cited = blocks[0].name
    assert [c.args for c in calls[:2]] == [
        '{"id": "r{{seq:' + cited + '}}"}',
        '{"id": "R{{seq:' + cited + '}}"}',
    ]
    assert (blocks[0].label, blocks[0].content) == ("|", "")
    assert calls[2].tool == "recall_search"
    assert len(json.loads(calls[2].args)["query"]) <= len("artefacts")
    assert all(c.note.startswith("adopted from a divergence, shrunk: ") for c in calls)
    small = small_golden(*FEW)
    corpus: Corpus = dataclasses.replace(
        small.corpus, blocks=small.corpus.blocks + blocks, calls=small.corpus.calls + calls
    )

    # make golden against the reference: the journal is kept, the recording beside it;
    # parity review --accept-all takes it
    path = tmp_path / "recall.json"
    shutil.copy(small.path, path)
    out_buffer = io.StringIO()
    assert run_record(corpus, journal_path=str(path), go=None, check=False, out=out_buffer) == 4, (
        out_buffer.getvalue()
    )
    assert (
        run_review(
            corpus, journal_path=str(path), decide="accept", answers=io.StringIO(), out=out_buffer
        )
        == 0
    ), out_buffer.getvalue()
    recorded = journal.load(path)
    check_consistency(recorded, corpus, path=str(path))
    assert {c.case for c in recorded.calls} == {c.case for c in corpus.calls}

    # the replay fails on the diverging port, on exactly the adopted cases
    with Replayer(recorded, corpus) as replayer:
        failed = {r.case for r in replayer.replay().failures}
    assert failed == {c.case for c in calls}

    # and passes once it is fixed
    monkeypatch.undo()
    with Replayer(recorded, corpus) as replayer:
        result = replayer.replay()
    assert (result.failed, result.passed) == (0, len(corpus.calls))
