package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"recallref/recall"
)

func (s *server) archiveRoute(r *http.Request) (any, error) {
	m, err := object[any](readBody(r))
	if err != nil {
		return nil, err
	}
	b, err := archivedBlock(m)
	if err != nil {
		return nil, err
	}
	seq, err := s.store.Add(b.label, b.content, b.locked)
	if err != nil {
		return nil, err
	}
	return map[string]any{"seq": seq, "id": "r" + strconv.FormatInt(seq, 10)}, nil
}

// toArchive is a block to archive, from an archive request's JSON object.
type toArchive struct {
	label, content string
	locked         bool
}

// archivedBlock reads the block that an archive request's object m describes.
func archivedBlock(m map[string]any) (toArchive, error) {
	label, ok1 := m["label"].(string)
	content, ok2 := m["content"].(string)
	if !ok1 || !ok2 {
		return toArchive{}, badRequest(`"label" and "content" must be strings`)
	}
	locked, ok := m["locked"].(bool)
	if !ok && m["locked"] != nil { // absent and null are false
		return toArchive{}, badRequest(`"locked" must be a boolean`)
	}
	return toArchive{label, content, locked}, nil
}

func (s *server) blockRoute(r *http.Request) (any, error) {
	q := r.URL.Query()
	if !q.Has("seq") {
		return nil, badRequest(`missing "seq"`)
	}
	seq, err := strconv.ParseInt(q.Get("seq"), 10, 64)
	if err != nil {
		return nil, badRequest(`"seq" must be a decimal int64`)
	}
	b, ok := s.store.Get(seq)
	if !ok {
		return nil, newError(http.StatusNotFound, "not found")
	}
	return b, nil
}

// execRoute runs a tool call. It reads the body before it waits: net/http
// sees a client that gives up (and ends the wait) only once the body is read.
func (s *server) execRoute(r *http.Request) (any, error) {
	body, readErr := readBody(r)
	if err := s.execFault(r); err != nil {
		return nil, err
	}
	if err := allow(r, http.MethodPost); err != nil {
		return nil, err
	}
	m, err := object[any](body, readErr)
	if err != nil {
		return nil, err
	}
	c, err := toolCall(m)
	if err != nil {
		return nil, err
	}
	output, err := s.runTool(c)
	if err != nil {
		return nil, err
	}
	return map[string]string{"output": output}, nil
}

// execFault is what the test options make of a tool call: it waits ExecDelay,
// if any, failing when the client gives up first, then fails as ExecStatus says.
func (s *server) execFault(r *http.Request) error {
	if s.ExecDelay > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), s.ExecDelay)
		defer cancel()
		<-ctx.Done()
		if err := r.Context().Err(); err != nil {
			return err
		}
	}
	if s.ExecStatus != 0 {
		return newError(s.ExecStatus, "tool endpoint down: %d %s", s.ExecStatus, http.StatusText(s.ExecStatus))
	}
	return nil
}

// call is a tool call: the tool's name and its JSON arguments.
type call struct{ name, args string }

// toolCall reads the tool call of a JSON object.
func toolCall(m map[string]any) (call, error) {
	name, ok1 := m["name"].(string)
	args, ok2 := m["args"].(string)
	if !ok1 || !ok2 {
		return call{}, badRequest(`"name" and "args" must be strings`)
	}
	return call{name, args}, nil
}

// runTool runs one tool call, its reads logged, and rewrites its output:
// a 404 for an unknown tool.
func (s *server) runTool(c call) (string, error) {
	tool, ok := recall.Tools[c.name]
	if !ok {
		return "", newError(http.StatusNotFound, "unknown tool %q", c.name)
	}
	output := tool(c.args, readLog{s})
	for _, rw := range s.RewriteOutput {
		output = strings.ReplaceAll(output, rw.Old, rw.New)
	}
	return output, nil
}

// readLog is the archive as a tool run by /tool/exec sees it: each read is
// logged before it is made, Get(seq) as "block?seq=N", All() as "blocks".
type readLog struct{ s *server }

func (l readLog) Get(seq int64) (recall.Block, bool) {
	l.s.log(l.s.reads, "block?seq="+strconv.FormatInt(seq, 10))
	return l.s.store.Get(seq)
}

func (l readLog) All() []recall.Block {
	l.s.log(l.s.reads, "blocks")
	return l.s.store.All()
}
