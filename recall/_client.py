"""ArchiveClient: the Go's archive reads and /tool/exec over one persistent httpx.Client.

Every httpx exception is translated here into a RecallError; anything the Go
answers that is not the contract's JSON is a GoUnavailableError. Bodies are read
streaming, with a size bound, and decoded strictly.
"""

from __future__ import annotations

import hashlib
import json
import operator
import re
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from types import TracebackType
from typing import Final, NoReturn

import httpx

from recall._errors import GoUnavailableError, UnknownToolError
from recall._tools import MAX_SEQ, Block, latin1_images

__all__ = [
    "BLOCKS_PATH",
    "BLOCK_PATH",
    "DEFAULT_CACHE_BYTES",
    "DEFAULT_MAX_BODY_BYTES",
    "EXEC_PATH",
    "ArchiveClient",
    "replace_surrogates",
]

BLOCK_PATH: Final = "/internal/v1/recall/block"
BLOCKS_PATH: Final = "/internal/v1/recall/blocks"
EXEC_PATH: Final = "/internal/v1/tool/exec"
DEFAULT_MAX_BODY_BYTES: Final = 512 * 1024 * 1024
DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024

_TOKEN = re.compile(r"[\x21-\x7e]+")  # what a header value carries as it is
_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> str:
    """Replace each surrogate code point (paired or not) with U+FFFD, as a Go string would."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


class ArchiveClient:
    """The Go instance's archive reads (an Archive) and its /tool/exec.

    ``transport`` replaces httpx's network transport (tests); the environment's
    proxies and .netrc are ignored, and redirects are not followed.

    ``cache_bytes`` bounds a cache of decoded blocks and their lowered images
    (about their real size; 0: no cache), keyed by the digest of each item's raw
    bytes in the /blocks body: a block that Go serves again byte for byte is not
    decoded nor lowered again (blocks never change once archived), and one whose
    bytes differ (another Go at the same URL) is a different entry. /blocks is
    still read whole on every search. Least recently used entries go first, but
    never for an entry the current read has used (a scan larger than the cache
    keeps what it holds rather than flushing it).
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 5.0,
        transport: httpx.BaseTransport | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        if token is not None and not _TOKEN.fullmatch(token):
            raise ValueError("the token must be one or more visible ASCII characters")
        if max_body_bytes < 0:
            raise ValueError("max_body_bytes must not be negative")
        if cache_bytes < 0:
            raise ValueError("cache_bytes must not be negative")
        headers = {"Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        try:
            self._http = httpx.Client(
                base_url=base_url,
                headers=headers,
                timeout=httpx.Timeout(timeout),
                follow_redirects=False,
                transport=transport,
                trust_env=False,
            )
        except httpx.InvalidURL as exc:
            raise ValueError(f"invalid base URL: {exc}") from exc
        self._token = token
        self._timeout = timeout
        self._max_body_bytes = max_body_bytes
        self._cache = BlockCache(cache_bytes) if cache_bytes else None

    def __repr__(self) -> str:
        url = self._http.base_url.copy_with(username=None, password=None)
        return f"ArchiveClient({str(url)!r})"

    def __enter__(self) -> ArchiveClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    # The reads and the call.

    def get_block(self, seq: int) -> Block | None:
        """The readable block with this seq, or None when the Go answers its JSON 404."""
        digits = str(operator.index(seq))
        what = f"GET {BLOCK_PATH}?seq={digits}"
        status, doc, surrogates = self._call(what, "GET", BLOCK_PATH, params={"seq": digits})
        if status == 404:
            if isinstance(doc, dict) and "error" in doc:
                return None
            raise GoUnavailableError(what, "status 404 without the JSON error body")
        block = _block(doc, surrogates)
        if block is None or block.seq != seq:
            raise GoUnavailableError(what, "the body is not the requested block")
        return block

    def all_blocks(self) -> list[Block]:
        """Every readable block, by increasing seq."""
        what = f"GET {BLOCKS_PATH}"
        cache = self._cache
        decode = _decode_blocks if cache is None else cache.decode_blocks
        status, doc, surrogates = self._call(what, "GET", BLOCKS_PATH, decode=decode)
        items = doc.get("blocks") if status == 200 and isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise GoUnavailableError(what, _unexpected(status, "blocks"))
        blocks: list[Block] = []
        last = 0
        for item in items:
            # The cache gives Blocks already (decoded, checked); anything else is JSON.
            block = item if type(item) is Block else _block(item, surrogates)
            if block is None or block.seq <= last:
                raise GoUnavailableError(what, "the blocks are not valid blocks by increasing seq")
            blocks.append(block)
            last = block.seq
        return blocks

    def latin1_images(self, block: Block) -> tuple[bytes, bytes]:
        """``recall._tools.latin1_images(block)``, from the cache when it holds this block."""
        if self._cache is not None:
            images = self._cache.images(block)
            if images is not None:
                return images
        return latin1_images(block)

    def exec_tool(self, name: str, args: str) -> str:
        """Go's own output for a tool call; UnknownToolError when it answers its JSON 404."""
        what = f"POST {EXEC_PATH}"
        # ASCII JSON: any str encodes, and Go decodes it to the same text.
        body = json.dumps({"name": name, "args": args}).encode("ascii")
        status, doc, _ = self._call(what, "POST", EXEC_PATH, content=body)
        if status == 404 and isinstance(doc, dict) and "error" in doc:
            raise UnknownToolError(name)
        output = doc.get("output") if status == 200 and isinstance(doc, dict) else None
        if not isinstance(output, str):
            raise GoUnavailableError(what, _unexpected(status, "output"))
        return replace_surrogates(output)

    # HTTP.

    def _call(
        self,
        what: str,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        content: bytes | None = None,
        decode: Callable[[bytearray], tuple[object, bool]] | None = None,
    ) -> tuple[int, object, bool]:
        """Send a request; its status (200 or 404), its decoded JSON body, and the surrogate flag.

        Any other status is a GoUnavailableError, and so is a 200 body that is not
        JSON; a 404 body that is not JSON decodes to None (the caller decides).
        ``decode`` replaces ``_decode`` (same result, such as ``_decode_blocks``).
        """
        headers = {"Content-Type": "application/json"} if content is not None else None
        try:
            with self._http.stream(
                method, path, params=params, content=content, headers=headers
            ) as response:
                status = response.status_code
                if status not in (200, 404):
                    raise GoUnavailableError(what, f"status {status}")
                body = self._read(response, what)
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
            raise GoUnavailableError(what, self._describe(exc)) from exc
        try:
            doc, surrogates = (decode or _decode)(body)
        except ValueError as exc:
            if status == 404:
                return status, None, False
            raise GoUnavailableError(what, f"status 200, invalid JSON body: {exc}") from exc
        return status, doc, surrogates

    def _read(self, response: httpx.Response, what: str) -> bytearray:
        """The whole body, or GoUnavailableError past max_body_bytes or the time-out.

        httpx's read time-out bounds each wait for bytes; a body trickling in, each
        byte on time, would never end: the whole body must arrive within the
        time-out of its headers (checked as each chunk arrives).
        """
        limit = self._max_body_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise GoUnavailableError(what, f"body larger than {limit} bytes")
        deadline = time.monotonic() + self._timeout
        body = bytearray()
        for chunk in response.iter_bytes():
            if len(body) + len(chunk) > limit:
                raise GoUnavailableError(what, f"body larger than {limit} bytes")
            if time.monotonic() > deadline:
                raise GoUnavailableError(
                    what, f"body not complete within {self._timeout:g}s of its headers"
                )
            body += chunk
        return body

    def _describe(self, exc: Exception) -> str:
        """The exception's kind and message, the token masked should it appear."""
        detail = str(exc)
        if self._token:
            detail = detail.replace(self._token, "***")
        kind = type(exc).__name__
        return f"{kind}: {detail}" if detail else kind


def _decode(body: bytearray) -> tuple[object, bool]:
    """Strict JSON from UTF-8 bytes, and whether its strings may hold surrogates.

    Empties body as soon as it is decoded to text. ValueError when it is not JSON.
    """
    text = body.decode("utf-8")  # UnicodeDecodeError is a ValueError
    body.clear()  # the caller's buffer too: the text is all that is needed now
    # The text is valid UTF-8, so a surrogate can only come from a \uD800-\uDFFF escape.
    surrogates = "\\ud" in text or "\\uD" in text
    try:
        return json.loads(text, parse_constant=_reject_constant), surrogates
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


# Go's compact encoding of the /blocks body: {"blocks":[{...},{...}]} plus a newline.
_BLOCKS_HEAD = re.compile(rb'[ \t\n\r]*\{[ \t\n\r]*"blocks"[ \t\n\r]*:[ \t\n\r]*\[')
_JSON_SPACE: Final = b" \t\n\r"
_ITEM_CUT: Final = b'},{"'
_ITEM_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")  # one pass for "\\ud" and "\\uD"


def _decode_blocks(body: bytearray) -> tuple[object, bool]:
    """``_decode`` for the /blocks body: the same result, item by item when it can.

    Decoding the whole body as one text costs a copy of it, 4 bytes a character as
    soon as one character lies outside the BMP; Go's compact encoding is decoded
    one item at a time instead (each as narrow as its own characters). Any other
    body goes through ``_decode``. Empties body once decoded.
    """
    surrogates = _SURROGATE_ESCAPE.search(body) is not None  # as _decode finds them in the text
    items = _compact_items(body)
    if items is None:
        return _decode(body)
    body.clear()
    return {"blocks": items}, surrogates


def _array_bounds(body: bytearray) -> tuple[int, int] | None:
    """Where the items of ``{"blocks": [...]}`` start and where its ``]`` is, or None."""
    head = _BLOCKS_HEAD.match(body)
    if head is None:
        return None
    end = len(body)
    while end and body[end - 1] in _JSON_SPACE:
        end -= 1
    if end < 2 or body[end - 1] != ord("}"):
        return None
    end -= 1
    while end and body[end - 1] in _JSON_SPACE:
        end -= 1
    end -= 1  # the array's "]"
    pos = head.end()
    if end < pos or body[end] != ord("]"):
        return None
    return pos, end


def _compact_items(body: bytearray) -> list[object] | None:
    """The items of ``{"blocks": [item, ...]}`` when each item is cut from the next by
    ``},{"`` and nothing else (Go's encoding), else None.

    A JSON string holds ``"`` only escaped, so ``},{"`` never lies inside one: a
    valid body of that shape is cut exactly between its items, and each item,
    decoded alone by json's own scanner (strict, no NaN), is what ``json.loads``
    gives for it. Anything else (spaces, nested values, invalid JSON or UTF-8)
    makes a piece fail to decode, and the whole body is left to ``_decode``.
    """
    bounds = _array_bounds(body)
    if bounds is None:
        return None
    pos, end = bounds
    items: list[object] = []
    if pos == end:
        return items
    view = memoryview(body)
    try:
        while True:
            cut = body.find(_ITEM_CUT, pos, end)
            stop = end if cut < 0 else cut + 1
            text = str(view[pos:stop], "utf-8")
            item, at = _ITEM_DECODER.raw_decode(text)
            if at != len(text):
                return None
            items.append(item)
            if cut < 0:
                return items
            pos = cut + 2
    except (ValueError, RecursionError):
        return None
    finally:
        view.release()


_SEQ_HEAD: Final = b'{"seq":'


def _cached_items(body: bytearray, cache: BlockCache) -> list[object] | None:
    """``_compact_items`` through the cache: each item that is a valid block given as
    its Block, from the cache when it holds the item's bytes; other items as JSON.

    The cut between items is the one ``_compact_items`` makes. When the cache holds
    a block under the seq an item starts with, the item is first tried with that
    entry's length: if those bytes are the entry's bytes (same digest) and ``},{"``
    (or the array's end) follows them, that is where ``find`` would cut too (the
    entry's bytes were cut the same way, so hold no ``},{"``, and end with ``}``).
    A Block decoded from an item's bytes depends on those bytes alone (a surrogate
    comes from an escape in them), so the cache's Block is the one decoding gives.
    """
    bounds = _array_bounds(body)
    if bounds is None:
        return None
    pos, end = bounds
    items: list[object] = []
    if pos == end:
        return items
    view = memoryview(body)
    sha256 = hashlib.sha256
    try:
        while True:
            block: Block | None = None
            guess = cache.length_for(body, pos)
            if guess:
                stop = pos + guess
                if stop == end or (stop + 3 <= end and body[stop - 1 : stop + 3] == _ITEM_CUT):
                    block = cache.get(sha256(view[pos:stop]).digest())
            if block is None:
                cut = body.find(_ITEM_CUT, pos, end)
                stop = end if cut < 0 else cut + 1
                item_bytes = view[pos:stop]
                key = b""
                # A cache that this read has filled admits nothing more, and holds no
                # entry for a seq it does not know (at worst a hit missed): no digest.
                if guess or not cache.full:
                    key = sha256(item_bytes).digest()
                    block = cache.get(key)
                if block is None:
                    text = str(item_bytes, "utf-8")
                    item, at = _ITEM_DECODER.raw_decode(text)
                    if at != len(text):
                        return None
                    surrogates = _SURROGATE_ESCAPE.search(item_bytes) is not None
                    block = _block(item, surrogates)
                    if block is None:
                        items.append(item)  # not a block: all_blocks says so
                    elif key:
                        cache.put(key, block, stop - pos)
            if block is not None:
                items.append(block)
            if stop == end:
                return items
            pos = stop + 1
    except (ValueError, RecursionError):
        return None
    finally:
        view.release()


class _Entry:
    __slots__ = ("block", "images", "length", "read", "size")

    def __init__(
        self, block: Block, images: tuple[bytes, bytes], length: int, size: int, read: int
    ) -> None:
        self.block = block
        self.images = images
        self.length = length  # of the item's raw bytes
        self.size = size
        self.read = read


# What an entry costs besides its strings and images: the Block and its int, the
# entry, the digest, and the slots of the dicts that hold it (CPython, 64-bit).
_ENTRY_OVERHEAD: Final = 560
_BYTES_OVERHEAD: Final = sys.getsizeof(b"")


class BlockCache:
    """Decoded Blocks and their latin1_images by the digest of their raw item bytes.

    Bounded by ``limit`` bytes (each entry counted as its strings, images and
    bookkeeping, approximately). Least recently used entries are evicted first, but
    not those used by the current read (``decode_blocks``): an entry that would need
    them evicted is not admitted.
    """

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("limit must not be negative")
        self.limit = limit
        self.used = 0
        self._read = 0
        self._full = 0  # the last read that found the cache full of its own entries
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()
        self._by_block: dict[int, _Entry] = {}  # id(block): the entry holds the block alive
        self._by_seq: dict[int, _Entry] = {}  # the latest entry for each seq

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def full(self) -> bool:
        """Whether this read has found every entry in use by itself (nothing more fits)."""
        return self._full == self._read

    def decode_blocks(self, body: bytearray) -> tuple[object, bool]:
        """``_decode_blocks`` through this cache: one read of /blocks.

        Every item that is a valid block is a Block in the result (its surrogates
        replaced already), so the surrogate flag matters for no item: False.
        """
        self._read += 1
        items = _cached_items(body, self)
        if items is None:
            return _decode(body)
        body.clear()
        return {"blocks": items}, False

    def length_for(self, body: bytearray, pos: int) -> int:
        """The raw length of the entry for the seq the item at ``pos`` names, else 0 (a guess)."""
        if not body.startswith(_SEQ_HEAD, pos):
            return 0
        start = pos + len(_SEQ_HEAD)
        comma = body.find(b",", start, start + 20)
        if comma < 0:
            return 0
        try:
            entry = self._by_seq.get(int(body[start:comma]))
        except ValueError:
            return 0
        return 0 if entry is None else entry.length

    def get(self, key: bytes) -> Block | None:
        """The Block for these item bytes' digest, or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        entry.read = self._read
        self._by_seq[entry.block.seq] = entry
        return entry.block

    def put(self, key: bytes, block: Block, length: int) -> None:
        """Keep the block (``length`` raw bytes; its images computed) when there is room."""
        if key in self._entries:
            return
        content, label = block.content, block.label
        size = (
            _ENTRY_OVERHEAD
            + sys.getsizeof(content)
            + sys.getsizeof(label)
            + _BYTES_OVERHEAD
            + len(content)
            + (_BYTES_OVERHEAD + len(label) if label else 0)
        )
        if size > self.limit:
            return
        entries = self._entries
        while self.used + size > self.limit:
            oldest = next(iter(entries.values()))
            if oldest.read == self._read:
                self._full = self._read
                return  # in use by this read: keep it rather than admit this one
            entries.popitem(last=False)
            del self._by_block[id(oldest.block)]
            if self._by_seq.get(oldest.block.seq) is oldest:
                del self._by_seq[oldest.block.seq]
            self.used -= oldest.size
        entry = _Entry(block, latin1_images(block), length, size, self._read)
        entries[key] = entry
        self._by_block[id(block)] = entry
        self._by_seq[block.seq] = entry
        self.used += size

    def images(self, block: Block) -> tuple[bytes, bytes] | None:
        """The block's latin1_images when this very Block object is in the cache."""
        entry = self._by_block.get(id(block))
        if entry is None or entry.block is not block:
            return None
        return entry.images


def _block(item: object, surrogates: bool) -> Block | None:
    """The Block an item of the contract's JSON describes, or None when it is not one.

    With ``surrogates``, a lone surrogate (from a \\uD800-\\uDFFF escape) in the
    label or the content becomes U+FFFD, as Go's decoder makes it.
    """
    if not isinstance(item, dict):
        return None
    seq = item.get("seq")
    label = item.get("label")
    content = item.get("content")
    if type(seq) is not int or not 1 <= seq <= MAX_SEQ:  # bool is not an int here
        return None
    if not isinstance(label, str) or not isinstance(content, str):
        return None
    if surrogates:
        label, content = replace_surrogates(label), replace_surrogates(content)
    return Block(seq, label, content)


def _unexpected(status: int, member: str) -> str:
    if status != 200:
        return f"status {status}"
    return f"status 200, the body is not the JSON object with {member!r}"
