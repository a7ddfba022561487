"""parity.fakego: the journal's archive, served as Go serves it."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator

import httpx
import pytest

from parity.corpus import get_corpus
from parity.errors import ParityError
from parity.fakego import FakeGo, Mode, Served, blocks_body, go_json, names_tag
from parity.fixtures.go import FreshGo
from parity.journal import Journal, JournalBlock, RecordedBy
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("<a href='x'>&amp;</a>", "\"\\u003ca href='x'\\u003e\\u0026amp;\\u003c/a\\u003e\""),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ("\b\f\n\r\t\x00\x1f\x7f", '"\\b\\f\\n\\r\\t\\u0000\\u001f\x7f"'),
        ('"\\/', '"\\"\\\\/"'),
        ("é😀\u00a0\ufeff", '"é😀\u00a0\ufeff"'),
        ({"seq": 1, "label": "", "content": "x"}, '{"seq":1,"label":"","content":"x"}'),
        ([None, True, False, 9223372036854775807], "[null,true,false,9223372036854775807]"),
    ],
)
def test_go_json(value: object, encoded: str) -> None:
    assert go_json(value) == (encoded + "\n").encode("utf-8")


@pytest.mark.go
def test_blocks_body_is_byte_identical_to_the_reference(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=1000)
    for block in get_corpus("recall").blocks:
        go.archive(block.label, block.content, locked=block.locked)
    with httpx.Client(base_url=go.base_url) as client:
        served = client.get(BLOCKS_PATH)
        one = client.get(BLOCK_PATH, params={"seq": "1002"})
        missing = client.get(BLOCK_PATH, params={"seq": "1035"})  # the locked block
    blocks = [JournalBlock(**b) for b in served.json()["blocks"]]
    assert blocks_body(blocks) == served.content
    journal = Journal(corpus="recall", recorded_by=_meta(), blocks=tuple(blocks))
    with FakeGo(journal) as fake, httpx.Client(base_url=fake.base_url) as client:
        assert client.get(BLOCKS_PATH).content == served.content
        mine = client.get(BLOCK_PATH, params={"seq": "1002"})
        assert (mine.status_code, mine.content) == (one.status_code, one.content)
        gone = client.get(BLOCK_PATH, params={"seq": "1035"})
        assert (gone.status_code, gone.content) == (missing.status_code, missing.content)
        fake.check()


def _meta() -> RecordedBy:
    return RecordedBy(
        go_version="go", unicode_version="u", goos="linux", goarch="amd64", instance="reference"
    )


@pytest.fixture
def fake_go(golden: Journal) -> Iterator[FakeGo]:
    """A fake Go serving the recall journal; ``check()`` runs when the test ends."""
    with FakeGo(golden) as fake:
        yield fake
        fake.check()


@pytest.fixture
def client(fake_go: FakeGo) -> httpx.Client:
    return httpx.Client(base_url=fake_go.base_url)


def test_block_routes(fake_go: FakeGo, client: httpx.Client, golden: Journal) -> None:
    first = golden.blocks[0]
    answer = client.get(BLOCK_PATH, params={"seq": str(first.seq)})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {"seq": first.seq, "label": first.label, "content": first.content}
    assert client.get(BLOCK_PATH, params={"seq": f"+00{first.seq}"}).json()["seq"] == first.seq
    absent = client.get(BLOCK_PATH, params={"seq": "999999"})
    assert (absent.status_code, absent.content) == (404, b'{"error":"not found"}\n')
    for bad in ["", "r1", "1.0", "9223372036854775808", "1_000"]:
        assert client.get(BLOCK_PATH, params={"seq": bad}).status_code == 400
    assert client.get(BLOCK_PATH).status_code == 400
    assert client.get(BLOCKS_PATH).json()["blocks"][0]["seq"] == first.seq


@pytest.mark.parametrize("mode", ["archive", "conditional", "delta"])
def test_exec_answers_500_but_in_fallback_mode(
    fake_go: FakeGo, client: httpx.Client, golden: Journal, mode: Mode
) -> None:
    fake_go.mode = mode
    call = golden.call("recall-id-plain")  # a recorded call: only the mode refuses it
    answer = client.post(EXEC_PATH, json={"name": call.tool, "args": call.args})
    assert answer.status_code == 500
    assert answer.json() == {"error": f"fake Go: /tool/exec disabled in {mode} mode"}


def test_fallback_mode(fake_go: FakeGo, client: httpx.Client, golden: Journal) -> None:
    fake_go.mode = "fallback"
    call = golden.call("recall-id-plain")
    answer = client.post(EXEC_PATH, json={"name": call.tool, "args": call.args})
    assert answer.json() == {"output": call.output}
    assert client.get(BLOCKS_PATH).status_code == 500
    assert client.get(BLOCK_PATH, params={"seq": "1000"}).status_code == 500


def test_conditional_mode(fake_go: FakeGo, client: httpx.Client) -> None:
    fake_go.mode = "conditional"
    full = client.get(BLOCKS_PATH)
    tag = full.headers["etag"]
    assert (full.status_code, tag) == (200, fake_go.etag)
    assert re.fullmatch(r'"fake-[0-9a-f]{16}"', tag)
    assert full.content == client.get(BLOCKS_PATH, headers={"If-None-Match": '"other"'}).content
    again = client.get(BLOCKS_PATH, headers={"If-None-Match": tag})
    assert (again.status_code, again.headers["etag"], again.content) == (304, tag, b"")
    fake_go.mode = "archive"
    plain = client.get(BLOCKS_PATH, headers={"If-None-Match": tag})
    assert (plain.status_code, "etag" in plain.headers) == (200, False)


def _since(client: httpx.Client, tag: str, *, none_match: bool = True) -> httpx.Response:
    headers = {"If-None-Match": tag} if none_match else {}
    return client.get(BLOCKS_PATH, params={"since": tag}, headers=headers)


def test_delta_mode(fake_go: FakeGo, client: httpx.Client, golden: Journal) -> None:
    fake_go.mode = "delta"
    full = client.get(BLOCKS_PATH)
    journal_tag = full.headers["etag"]
    assert full.content == blocks_body(golden.blocks)
    assert _since(client, journal_tag).status_code == 304
    stale = fake_go.stale(0)
    stale_tag = fake_go.stage(stale)
    there = _since(client, journal_tag)
    assert there.headers["etag"] == stale_tag != journal_tag
    extra = [b for b in stale if b not in golden.blocks]
    assert there.json() == {
        "since": journal_tag,
        "blocks": [dataclasses.asdict(b) for b in extra],
        "gone": [b.seq for b in golden.blocks[::4]],
    }
    fake_go.stage()
    back = _since(client, stale_tag).json()
    assert [b["seq"] for b in back["blocks"]] == [b.seq for b in golden.blocks[::4]]
    assert back["gone"] == [b.seq for b in extra]
    # An unknown tag gets the full body; a since the If-None-Match does not name is wrong.
    assert _since(client, '"other"').content == blocks_body(golden.blocks)
    fake_go.check()
    _since(client, stale_tag, none_match=False)
    with pytest.raises(ParityError, match="without If-None-Match"):
        fake_go.check()
    assert fake_go.stale(4) == list(golden.blocks)


@pytest.mark.go
def test_delta_body_is_the_references(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=7)
    for i in range(4):
        go.archive(f"<b>{i}</b>", f"block \u2028{i}", locked=i == 3)
    with httpx.Client(base_url=go.base_url) as client:
        before = client.get(BLOCKS_PATH)
        go.lock(8)
        go.lock(10, locked=False)
        go.archive("new", "& more")
        after = client.get(BLOCKS_PATH)
        delta = _since(client, before.headers["etag"])
    assert '"since"' in delta.text
    sets = [[JournalBlock(**b) for b in r.json()["blocks"]] for r in (before, after)]
    journal = Journal(corpus="recall", recorded_by=_meta(), blocks=tuple(sets[0]))
    with FakeGo(journal, mode="delta") as fake, httpx.Client(base_url=fake.base_url) as client:
        old = fake.stage(sets[0])
        fake.stage(sets[1])
        mine = _since(client, old)
        fake.check()
    escaped = [json.dumps(t)[1:-1].encode() for t in (old, before.headers["etag"])]
    assert mine.content.replace(*escaped) == delta.content


def test_the_tag_names_the_blocks(golden: Journal) -> None:
    fewer = dataclasses.replace(golden, blocks=golden.blocks[:-1])
    assert FakeGo(golden).etag == FakeGo(golden).etag != FakeGo(fewer).etag


@pytest.mark.go
def test_if_none_match_is_read_as_the_reference_reads_it(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=1)
    go.archive("a", "b")
    with httpx.Client(base_url=go.base_url) as client:
        tag = client.get(BLOCKS_PATH).headers["etag"]
        fields = [
            [tag],
            [f"W/{tag}"],
            ["*"],
            ["*,"],
            [f'"x", {tag}'],
            [f'"x",{tag} , "y"'],
            [f", ,{tag},"],
            ['"x"', tag],  # two lines, one list
            ['"x"'],
            [","],
            [tag[1:-1]],  # unquoted
            [f'"x" junk, {tag}'],  # malformed: names nothing
            [f"{tag} {tag}"],
            [f"w/{tag}"],
            ["*, " + tag],
            [f'"\x7f", {tag}'],
        ]
        for lines in fields:
            headers = httpx.Headers([("If-None-Match", line) for line in lines])
            status = client.get(BLOCKS_PATH, headers=headers).status_code
            assert (status == 304) == names_tag(lines, tag), lines


def test_unexpected_requests_fail_check(golden: Journal) -> None:
    with FakeGo(golden) as fake, httpx.Client(base_url=fake.base_url) as client:
        client.post(BLOCKS_PATH)
        client.get("/internal/v1/recall/archive")
        with pytest.raises(ParityError, match="not set up for") as info:
            fake.check()
        assert info.value.args[0].count("\n") == 2  # both requests named
        fake.check()  # cleared
        fake.mode = "fallback"
        client.post(EXEC_PATH, json={"name": "recall", "args": '{"id": "never recorded"}'})
        with pytest.raises(ParityError, match="does not hold"):
            fake.check()


def test_served_since(fake_go: FakeGo, client: httpx.Client) -> None:
    mark = fake_go.mark()
    client.get(BLOCK_PATH, params={"seq": "5"})
    served = fake_go.served_since(mark)
    assert [str(s) for s in served] == [f"GET {BLOCK_PATH}?seq=5 -> 404"]
    assert json.loads(served[0].body) == {"error": "not found"}


@pytest.mark.parametrize(
    ("method", "target", "read"),
    [
        ("GET", f"{BLOCK_PATH}?seq=1000", "block?seq=1000"),
        ("GET", f"{BLOCK_PATH}?seq=0", "block?seq=0"),
        ("GET", f"{BLOCK_PATH}?seq=007", "block?seq=7"),  # as Go's handler reads it
        ("GET", f"{BLOCK_PATH}?seq=%2B7&seq=8", "block?seq=7"),
        ("GET", f"{BLOCK_PATH}?seq=-0", "block?seq=0"),
        ("GET", f"{BLOCK_PATH}?seq=r7", "block?seq=r7"),  # no Go read looks like it
        ("GET", f"{BLOCK_PATH}?seq=9223372036854775808", "block?seq=9223372036854775808"),
        ("GET", BLOCK_PATH, "block?"),
        ("GET", BLOCKS_PATH, "blocks"),
        ("GET", f"{BLOCKS_PATH}?seq=1", "blocks"),
        ("DELETE", BLOCKS_PATH, None),
        ("POST", EXEC_PATH, None),
        ("GET", "/internal/v1/recall/blockz", None),
    ],
)
def test_served_read(method: str, target: str, read: str | None) -> None:
    assert Served(method, target, 200, "").read == read


def test_listens_on_loopback_only(fake_go: FakeGo) -> None:
    assert fake_go.base_url.startswith("http://127.0.0.1:")
