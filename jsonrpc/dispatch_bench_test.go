package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkDispatchLine is the reader's work on one 5 MB notification line,
// from the line to the params handed to Notify: its B/op is the copies the
// envelope's decoding makes (none of the params: LineRaw). codex's
// BenchmarkItemLine goes on from the params to the event.
func BenchmarkDispatchLine(b *testing.B) {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 5<<20/44)
	params, _ := json.Marshal(map[string]any{"id": "i", "text": text})
	line := append([]byte(`{"method":"some/notification","params":`), params...)
	line = append(line, '}')
	var got int
	c := &Conn{h: Handlers{Notify: func(_ string, p json.RawMessage) { got += len(p) }}}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		c.dispatch(bytes.Clone(line)) // ReadLine hands over a fresh buffer per line
	}
	if got == 0 {
		b.Fatal("no params handed over")
	}
}
