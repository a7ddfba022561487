package archive

import (
	"cmp"
	"slices"

	"recallref/recall"
)

// DefaultHistory is the number of changes an archive keeps for Delta.
const DefaultHistory = 1024

// A change is one block made readable or unreadable, at generation gen.
type change struct {
	gen      uint64
	seq      int64
	readable bool
}

// history is the bounded record of an archive's recent changes: every change
// after generation from is in changes, oldest first.
type history struct {
	max     int
	from    uint64
	changes []change
}

// record adds the change that made generation gen.
func (h *history) record(gen uint64, seq int64, readable bool) {
	h.changes = append(h.changes, change{gen, seq, readable})
	if len(h.changes) > h.max {
		h.from = h.changes[0].gen
		h.changes = h.changes[1:] // append reallocates the array in time
	}
}

// forget drops every change: only generation gen on is known.
func (h *history) forget(gen uint64) {
	h.from, h.changes = gen, h.changes[:0]
}

// SetHistory sets how many changes (blocks made readable or unreadable) the
// archive keeps for Delta: n <= 0 keeps none. It starts at DefaultHistory.
// The changes kept so far are forgotten.
func (a *Archive) SetHistory(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hist.max = n
	a.hist.forget(a.gen)
}

// Delta describes how the readable set changed since generation since: the
// blocks readable now that were not then (by increasing seq), the seqs
// readable then that are not now (increasing), and the current generation,
// all under one lock. ok is false when the archive no longer knows that
// generation (too old, before a Reset, or never reached).
func (a *Archive) Delta(since uint64) (blocks []recall.Block, gone []int64, gen uint64, ok bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if since < a.hist.from || since > a.gen {
		return nil, nil, a.gen, false
	}
	// net[seq] is true for a block made readable since, false for one gone.
	net := map[int64]bool{}
	for _, c := range a.hist.changes {
		if c.gen <= since {
			continue
		}
		if prev, seen := net[c.seq]; seen && prev != c.readable {
			delete(net, c.seq) // back as it was at since
		} else {
			net[c.seq] = c.readable
		}
	}
	blocks, gone = []recall.Block{}, []int64{}
	for seq, readable := range net {
		if readable {
			blocks = append(blocks, a.entries[seq-a.first].block)
		} else {
			gone = append(gone, seq)
		}
	}
	slices.SortFunc(blocks, func(x, y recall.Block) int { return cmp.Compare(x.Seq, y.Seq) })
	slices.Sort(gone)
	return blocks, gone, a.gen, true
}
