package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// Error is a JSON-RPC error object, as received (a call's error reply) or
// sent (an Answer's refusal).
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// CodeMethodNotFound is JSON-RPC's "method not found".
const CodeMethodNotFound = -32601

// wireMessage is any line the peer writes: a response (id and result or
// error), a notification (method, no id) or a request (id and method).
type wireMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params LineRaw         `json:"params,omitempty"`
	Result LineRaw         `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// LineRaw is a json.RawMessage that keeps the bytes it was decoded from
// instead of copying them: params and results are most of a line, and a
// line can be megabytes (an item with a 5 MB reply, a page of history).
// Safe on the params and results a Conn hands out because json.Unmarshal
// hands UnmarshalJSON a piece of its input and ReadLine gives every line a
// buffer of its own, never reused: what is kept past the line's dispatch
// (an event's content, a call's decoded result) is copied out by its
// decoder, and the line is then garbage.
type LineRaw []byte

func (r *LineRaw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// outgoing is what this side writes; the dialect has no "jsonrpc" member.
type outgoing struct {
	ID     any    `json:"id,omitempty"`
	Method string `json:"method,omitempty"`
	Params any    `json:"params,omitempty"`
	Result any    `json:"result,omitempty"`
	Error  *Error `json:"error,omitempty"`
}
