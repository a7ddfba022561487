// Package archive is the reference instance's in-memory block archive,
// safe for concurrent use: consecutive seqs, locked blocks kept but never
// readable, a generation that names each readable set (never reused), and
// the last changes of that set, for Delta.
package archive

import (
	"errors"
	"math"
	"sync"

	"recallref/recall"
)

// ErrExhausted is returned by Add when the sequence has no seq left.
var ErrExhausted = errors.New("archive: sequence exhausted")

type entry struct {
	block  recall.Block
	locked bool
}

// Archive is an in-memory archive. Its seqs are consecutive from the first.
// It implements recall.Archive.
type Archive struct {
	mu      sync.RWMutex
	initial int64 // the first seq given to New
	first   int64
	entries []entry // entries[i] has seq first+i
	gen     uint64  // increased by every change
	hist    history // the last changes of the readable set, for Delta
}

var _ recall.Archive = (*Archive)(nil)

// New returns an empty archive whose first block gets seq firstSeq (>= 1).
func New(firstSeq int64) *Archive {
	if firstSeq < 1 {
		panic("archive: first seq must be >= 1")
	}
	return &Archive{initial: firstSeq, first: firstSeq, hist: history{max: DefaultHistory}}
}

// InitialSeq returns the first seq given to New.
func (a *Archive) InitialSeq() int64 { return a.initial }

// Reset empties the archive; the next seq is firstSeq (>= 1). The generation
// still increases: none from before names a set after.
func (a *Archive) Reset(firstSeq int64) {
	if firstSeq < 1 {
		panic("archive: first seq must be >= 1")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.first, a.entries = firstSeq, nil
	a.gen++
	a.hist.forget(a.gen)
}

// Add archives a block and returns its seq. A locked block is stored under
// a locked memory: it takes a seq but is never readable.
func (a *Archive) Add(label, content string, locked bool) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := int64(len(a.entries))
	if n > math.MaxInt64-a.first {
		return 0, ErrExhausted
	}
	seq := a.first + n
	a.entries = append(a.entries, entry{recall.Block{Seq: seq, Label: label, Content: content}, locked})
	a.gen++
	if !locked {
		a.hist.record(a.gen, seq, true)
	}
	return seq, nil
}

// at returns the entry of seq, or nil when seq was never archived.
func (a *Archive) at(seq int64) *entry {
	if seq < a.first || seq-a.first >= int64(len(a.entries)) {
		return nil
	}
	return &a.entries[seq-a.first]
}

// SetLocked locks (kept, not readable) or unlocks the block with this seq,
// reporting whether it was ever archived; only a change moves the generation.
func (a *Archive) SetLocked(seq int64, locked bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.at(seq)
	if e != nil && e.locked != locked {
		e.locked = locked
		a.gen++
		a.hist.record(a.gen, seq, !locked)
	}
	return e != nil
}

// Get returns the block with this seq; absent and locked blocks are not found.
func (a *Archive) Get(seq int64) (recall.Block, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if e := a.at(seq); e != nil && !e.locked {
		return e.block, true
	}
	return recall.Block{}, false
}

// All returns every readable block by increasing seq, never nil.
func (a *Archive) All() []recall.Block {
	blocks, _ := a.Snapshot()
	return blocks
}

// Snapshot returns every readable block by increasing seq (never nil) and
// the generation of the archive they were read from, both under one lock.
func (a *Archive) Snapshot() ([]recall.Block, uint64) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	blocks := make([]recall.Block, 0, len(a.entries))
	for _, e := range a.entries {
		if !e.locked {
			blocks = append(blocks, e.block)
		}
	}
	return blocks, a.gen
}

// Generation returns the current generation: 0 for a new archive, then
// increased by every change (an Add, even of a locked block, a lock, an
// unlock or a Reset).
func (a *Archive) Generation() uint64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.gen
}
