package codex

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkItemLine is the runtime's work on the params of one
// item/completed notification of a 5 MB reply, from the params the
// connection hands over to the projected event: its B/op is the copies the
// JSON decoding makes. The line's envelope before it is jsonrpc's
// BenchmarkDispatchLine.
func BenchmarkItemLine(b *testing.B) {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 5<<20/44)
	params, _ := json.Marshal(map[string]any{"threadId": "t", "turnId": "u",
		"item": map[string]any{"type": "agentMessage", "id": "i", "text": text}})
	var got int
	b.SetBytes(int64(len(params)))
	b.ReportAllocs()
	for b.Loop() {
		// jsonrpc.ReadLine hands over a fresh buffer per line, params a piece of it.
		got += len(toEvent("item/completed", bytes.Clone(params)).Message.Text)
	}
	if got == 0 {
		b.Fatal("no text projected")
	}
}
