package codex

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkItemLine is the reader's work on one item/completed line of a
// 5 MB reply, from the line to the projected event: its B/op is the
// copies the JSON decoding makes.
func BenchmarkItemLine(b *testing.B) {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 5<<20/44)
	params, _ := json.Marshal(map[string]any{"threadId": "t", "turnId": "u",
		"item": map[string]any{"type": "agentMessage", "id": "i", "text": text}})
	line := append([]byte(`{"method":"item/completed","params":`), params...)
	line = append(line, '}')
	var got int
	c := &conn{h: connHandlers{notify: func(m string, p json.RawMessage) { got += len(toEvent(m, p).Message.Text) }}}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		c.dispatch(bytes.Clone(line)) // readLine hands over a fresh buffer per line
	}
	if got == 0 {
		b.Fatal("no text projected")
	}
}
