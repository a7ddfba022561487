"""parity.journal: verified on load, canonical and atomic on write."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pytest

from parity import journal
from parity.errors import JournalError

from .conftest import GOLDEN, RunCli, small_journal


def test_round_trip(tmp_path: Path) -> None:
    j = small_journal()
    path = tmp_path / "j.json"
    journal.write(j, path)
    assert journal.load(path) == j


def test_canonical_text(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal.write(small_journal(), path)
    text = path.read_bytes().decode("utf-8")
    assert text.endswith("}\n")
    assert not text.endswith("\n\n")
    assert "line\u2028é" in text  # raw UTF-8, no \u escapes
    obj = json.loads(text)
    assert list(obj) == [
        "format",
        "corpus",
        "recorded_by",
        "seqs",
        "blocks",
        "blocks_sha256",
        "calls",
    ]
    assert list(obj["calls"][0]) == [
        "case",
        "tool",
        "args",
        "output",
        "sha256",
        "reads",
        "reads_sha256",
    ]
    assert obj["format"] == journal.FORMAT == 3
    assert obj["calls"][0]["reads"] == ["block?seq=7"]
    assert obj["calls"][1]["reads"] == []
    assert list(obj["blocks"][0]) == ["seq", "label", "content", "sha256"]
    block_text = json.dumps([7, "<b>", "line\u2028é"], ensure_ascii=False, separators=(",", ":"))
    block_sha = hashlib.sha256(block_text.encode("utf-8")).hexdigest()
    assert obj["blocks"][0]["sha256"] == block_sha
    top = f'{{"seqs":{{"a":7}},"blocks":["{block_sha}"]}}'.encode()
    assert obj["blocks_sha256"] == hashlib.sha256(top).hexdigest()
    assert obj["calls"][0]["sha256"] == journal.digest("[r7] <b>\nline\u2028é")
    assert obj["calls"][0]["reads_sha256"] == hashlib.sha256(b'["block?seq=7"]').hexdigest()
    assert obj["calls"][1]["reads_sha256"] == hashlib.sha256(b"[]").hexdigest()
    assert text == json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def test_write_is_idempotent(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    journal.write(small_journal(), first)
    journal.write(journal.load(first), second)
    assert first.read_bytes() == second.read_bytes()


def test_golden_is_canonical() -> None:
    assert journal.dumps(journal.load(GOLDEN)).encode("utf-8") == GOLDEN.read_bytes()


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "j.json"
    path.write_text("old", encoding="utf-8")
    os.chmod(path, 0o640)

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(JournalError, match="cannot write"):
        journal.write(small_journal(), path)
    assert path.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.json"]  # no temp file left
    monkeypatch.undo()
    journal.write(small_journal(), path)
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.json"]


def _broken(tmp_path: Path, edit: object) -> Path:
    path = tmp_path / "broken.json"
    journal.write(small_journal(), path)
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert callable(edit)
    edit(obj)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _set(*keys_then_value: object) -> object:
    *keys, value = keys_then_value

    def edit(obj: dict[str, object]) -> None:
        target: object = obj
        for key in keys[:-1]:
            target = target[key]  # type: ignore[index]
        target[keys[-1]] = value  # type: ignore[index]

    return edit


def _delete(*keys: object) -> object:
    def edit(obj: dict[str, object]) -> None:
        target: object = obj
        for key in keys[:-1]:
            target = target[key]  # type: ignore[index]
        del target[keys[-1]]  # type: ignore[attr-defined]

    return edit


@pytest.mark.parametrize(
    ("edit", "case", "field", "message"),
    [
        (_set("calls", 1, "output", "changed by hand"), "two", "output", "digest mismatch"),
        (_set("calls", 0, "sha256", "0" * 63), "one", "sha256", "64 lowercase hex"),
        (_set("format", 99), None, "format", "unknown format version 99"),
        (_set("format", 1), None, "format", "format version 1 is older"),
        (_set("format", 2), None, "format", "format version 2 is older"),
        (_set("blocks", 0, "content", "edited"), None, "blocks[0]", "digest mismatch"),
        (_set("blocks", 0, "label", "edited"), None, "blocks[0]", r"blocks\[0\]'s SHA-256"),
        (_set("blocks", []), None, "blocks", "the seqs' and blocks' SHA-256"),
        (_set("seqs", "a", 8), None, "blocks", "digest mismatch"),
        (_set("blocks_sha256", "0" * 64), None, "blocks", "digest mismatch"),
        (_set("blocks", 0, "sha256", "x"), None, "blocks[0].sha256", "64 lowercase hex"),
        (_delete("blocks", 0, "sha256"), None, "sha256", "missing"),
        (_delete("blocks_sha256"), None, "blocks_sha256", "missing"),
        (_set("calls", 0, "reads", ["block?seq=8"]), "one", "reads", "digest mismatch"),
        (_set("calls", 0, "reads", []), "one", "reads", "the reads' SHA-256"),
        (_set("calls", 0, "reads", None), "one", "reads", "digest mismatch"),
        (_set("calls", 1, "reads", ["blocks"]), "two", "reads", "digest mismatch"),
        (_set("calls", 0, "reads", "block?seq=7"), "one", "reads", "array or null"),
        (_set("calls", 0, "reads", ["block?seq=007"]), "one", "reads[0]", "is not a read"),
        (_set("calls", 0, "reads", ["blocks", "block"]), "one", "reads[1]", "is not a read"),
        (_set("calls", 0, "reads", [7]), "one", "reads[0]", "must be a string"),
        (_set("calls", 0, "reads_sha256", "A" * 64), "one", "reads_sha256", "64 lowercase"),
        (_delete("calls", 0, "reads"), "one", "reads", "missing"),
        (_delete("calls", 1, "reads_sha256"), "two", "reads_sha256", "missing"),
        (_set("format", "1"), None, "format", "must be an integer"),
        (_delete("calls", 1, "args"), "two", "args", "missing"),
        (_set("calls", 1, "args", 3), "two", "args", "must be a string, not a number"),
        (_set("calls", 1, "case", "one"), "one", "case", "duplicate case"),
        (_set("calls", 1, "case", "Not_Kebab"), "Not_Kebab", "case", "kebab-case"),
        (_set("calls", 0, "extra", 1), "one", "extra", "unknown field"),
        (_set("calls", 0, "tool", ""), "one", "tool", "empty tool name"),
        (_set("recorded_by", "instance", "staging"), None, "recorded_by.instance", "one of"),
        (_delete("recorded_by", "go_version"), None, "go_version", "missing"),
        (_set("blocks", 0, "seq", True), None, "blocks[0].seq", "must be an integer"),
        (_set("blocks", 0, "seq", 0), None, "blocks[0].seq", "below 1"),
        (_set("seqs", "a", "7"), None, "seqs.a", "must be an integer"),
        (_set("calls", {}), None, "calls", "must be an array"),
    ],
)
def test_malformed_journal_names_file_case_and_field(
    tmp_path: Path, edit: object, case: str | None, field: str, message: str
) -> None:
    path = _broken(tmp_path, edit)
    with pytest.raises(JournalError, match=message) as info:
        journal.load(path)
    err = info.value
    assert err.path == str(path)
    assert err.case == case
    assert err.field == field
    assert str(path) in str(err)
    if case is not None:
        assert repr(case) in str(err)


def test_lone_surrogate_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal.write(small_journal(), path)
    text = path.read_text(encoding="utf-8").replace('"{}"', '"\\ud800"')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(JournalError, match="lone surrogate") as info:
        journal.load(path)
    assert info.value.case == "two"


def test_repeated_key_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal.write(small_journal(), path)
    text = path.read_text(encoding="utf-8").replace(
        '"tool": "recall",', '"tool": "recall", "tool": "x",', 1
    )
    path.write_text(text, encoding="utf-8")
    with pytest.raises(JournalError, match="repeats the key 'tool'"):
        journal.load(path)


def test_truncated_journal_names_the_case(tmp_path: Path) -> None:
    data = GOLDEN.read_bytes()
    cut = data.index(b'"case": "search-limit-one"') + 60
    path = tmp_path / "truncated.json"
    path.write_bytes(data[:cut])
    with pytest.raises(JournalError, match="truncated") as info:
        journal.load(path)
    assert info.value.case == "search-limit-one"


def test_truncated_inside_a_utf8_sequence(tmp_path: Path) -> None:
    data = GOLDEN.read_bytes()
    cut = data.index("crème".encode()) + 3  # between the two bytes of "è"
    path = tmp_path / "truncated.json"
    path.write_bytes(data[:cut])
    with pytest.raises(JournalError, match="truncated"):
        journal.load(path)


def test_corrupted_journal_names_the_case(tmp_path: Path) -> None:
    data = GOLDEN.read_bytes()
    at = data.index(b'"case": "search-accents"')
    path = tmp_path / "corrupted.json"
    path.write_bytes(data[: at + 40] + b"\x00garbage" + data[at + 40 :])
    with pytest.raises(JournalError, match="corrupted") as info:
        journal.load(path)
    assert info.value.case == "search-accents"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no such file"):
        journal.load(tmp_path / "absent.json")


def test_unknown_reads_round_trip(tmp_path: Path) -> None:
    j = small_journal()
    calls = tuple(dataclasses.replace(c, reads=None) for c in j.calls)
    unknown = dataclasses.replace(j, calls=calls)
    path = tmp_path / "j.json"
    journal.write(unknown, path)
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert [c["reads"] for c in obj["calls"]] == [None, None]
    assert obj["calls"][0]["reads_sha256"] == hashlib.sha256(b"null").hexdigest()
    assert journal.load(path) == unknown
    assert journal.load(path) != j


def test_golden_records_go_reads() -> None:
    golden = journal.load(GOLDEN)
    first = golden.seqs["accents"]
    assert golden.call("recall-id-plain").reads == (f"block?seq={first}",)
    assert golden.call("recall-id-max-int64").reads == ("block?seq=9223372036854775807",)
    assert golden.call("recall-id-below-first").reads == ("block?seq=1",)
    assert golden.call("search-no-result").reads == ("blocks",)
    nothing = ["recall-id-zero", "recall-id-oversized", "recall-id-absent"]
    nothing.append("search-words-too-short")
    for case in nothing:
        assert golden.call(case).reads == (), case


def test_reads_edited_by_hand_fail_to_load(tmp_path: Path, run_cli: RunCli) -> None:
    data = GOLDEN.read_bytes()
    at = data.index(b'"case": "recall-id-zero"')
    reads_at = data.index(b'"reads": []', at)
    path = tmp_path / "edited.json"
    path.write_bytes(data[:reads_at] + b'"reads": ["block?seq=0"]' + data[reads_at + 11 :])
    with pytest.raises(JournalError, match="digest mismatch") as info:
        journal.load(path)
    assert (info.value.case, info.value.field) == ("recall-id-zero", "reads")
    status, _, err = run_cli("replay", "--journal", str(path))
    assert status == 2
    assert str(path) in err
    assert "'recall-id-zero'" in err
    assert "field 'reads'" in err


@pytest.mark.parametrize("damage", ["truncated", "corrupted", "version", "digest"])
def test_cli_exits_2_naming_file_and_case(tmp_path: Path, run_cli: RunCli, damage: str) -> None:
    data = GOLDEN.read_bytes()
    at = data.index(b'"case": "search-limit-one"')
    path = tmp_path / f"{damage}.json"
    if damage == "truncated":
        path.write_bytes(data[: at + 60])
    elif damage == "corrupted":
        path.write_bytes(data[: at + 60] + b"}}}" + data[at + 60 :])
    elif damage == "version":
        path.write_bytes(data.replace(f'"format": {journal.FORMAT},'.encode(), b'"format": 99,', 1))
    else:
        end = data.index(b'"sha256"', at)
        output_at = data.rindex(b'"output": "', at, end) + len(b'"output": "')
        path.write_bytes(data[:output_at] + b"X" + data[output_at:])
    status, out, err = run_cli("replay", "--journal", str(path))
    assert status == 2
    assert "Traceback" not in err
    assert err.startswith("parity: error: ")
    assert str(path) in err
    if damage == "version":
        assert "unknown format version 99" in err
    else:
        assert "'search-limit-one'" in err
    assert "passed" not in out
