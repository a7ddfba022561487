package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// MaxBodyBytes bounds a request body; a larger body is answered 413.
const MaxBodyBytes = 64 << 20

// A route answers a JSON value (200) or an error (a *statusError's status, else 500).
type route struct {
	method string // the method allowed, else 405; "" when fn checks it
	fn     func(r *http.Request) (any, error)
}

func (rt route) answer(r *http.Request) (any, error) {
	if err := allow(r, rt.method); err != nil {
		return nil, err
	}
	return rt.fn(r)
}

func (rt route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v, err := rt.answer(r)
	writeResult(w, v, err)
}

// writeResult writes a route's answer with encoding/json (HTML characters
// escaped), and the Allow header of a 405.
func writeResult(w http.ResponseWriter, v any, err error) {
	var se *statusError
	if errors.As(err, &se) && se.allow != "" {
		w.Header().Set("Allow", se.allow)
	}
	status, body := result(v, err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// result returns the status and JSON body that a route's answer is sent as.
func result(v any, err error) (int, any) {
	var se *statusError
	if err == nil {
		return http.StatusOK, v
	} else if !errors.As(err, &se) {
		se = &statusError{status: http.StatusInternalServerError, msg: err.Error()}
	}
	return se.status, map[string]string{"error": se.msg}
}

// A statusError is a request answered with status and {"error": msg}.
type statusError struct {
	status int
	msg    string
	allow  string // the Allow header of a 405
}

func (e *statusError) Error() string { return e.msg }

func newError(status int, format string, a ...any) error {
	return &statusError{status: status, msg: fmt.Sprintf(format, a...)}
}

func badRequest(format string, a ...any) error {
	return newError(http.StatusBadRequest, format, a...)
}

// allow fails with 405, and an Allow header, unless r uses method (or
// method is "").
func allow(r *http.Request, method string) error {
	if method == "" || r.Method == method {
		return nil
	}
	return &statusError{http.StatusMethodNotAllowed, "method not allowed", method}
}

// readBody reads a body of at most MaxBodyBytes (else 413).
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, badRequest("cannot read request body")
	} else if len(body) > MaxBodyBytes {
		return nil, newError(http.StatusRequestEntityTooLarge, "request body too large")
	}
	return body, nil
}

// object decodes body, one JSON object, into a map of exact keys (the last
// of a repeated one) to V values; err, readBody's, fails first.
func object[V any](body []byte, err error) (map[string]V, error) {
	var m map[string]V
	if err != nil {
		return nil, err
	} else if json.Unmarshal(body, &m) != nil || m == nil {
		return nil, badRequest("request body must be a JSON object")
	}
	return m, nil
}

// readList reads a body {key: [object, ...]} (null and a missing key are
// an empty list) and parses each object: the first that fails is named by
// its index, as "call 2" in "calls".
func readList[V, T any](r *http.Request, key string, parse func(map[string]V) (T, error)) ([]T, error) {
	var list []map[string]V
	fields, err := object[json.RawMessage](readBody(r))
	isNil := func(m map[string]V) bool { return m == nil }
	if raw := fields[key]; err == nil && raw != nil && (json.Unmarshal(raw, &list) != nil || slices.ContainsFunc(list, isNil)) {
		return nil, badRequest("%q must be an array of objects", key)
	} else if err != nil {
		return nil, err
	}
	parsed := make([]T, len(list))
	for i, m := range list {
		if parsed[i], err = parse(m); err != nil {
			return nil, badRequest("%s %d: %v", strings.TrimSuffix(key, "s"), i, err)
		}
	}
	return parsed, nil
}
