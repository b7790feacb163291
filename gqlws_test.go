package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// gqlFrame is one message of a GraphQL WebSocket protocol
// (graphql-transport-ws or the legacy graphql-ws).
type gqlFrame struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// gqlConn is a client's GraphQL WebSocket to a tuttid, past
// connection_init (the token in it, as the GUI sends it) and
// connection_ack.
type gqlConn struct {
	conn *websocket.Conn
}

// dialGraphQL opens /query on base with the subprotocol proto, header on
// the upgrade (nil: none); ctx bounds the dial and the handshake.
func dialGraphQL(ctx context.Context, base, proto string, header http.Header) (*gqlConn, error) {
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{proto}, HTTPHeader: header})
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	conn.SetReadLimit(8 << 20)
	c := &gqlConn{conn: conn}
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + testToken})
	if err := c.send(ctx, gqlFrame{Type: "connection_init", Payload: init}); err != nil {
		conn.CloseNow()
		return nil, err
	}
	for {
		f, err := c.read(ctx)
		if err != nil {
			conn.CloseNow()
			return nil, fmt.Errorf("connection_ack: %w", err)
		}
		switch f.Type {
		case "connection_ack":
			return c, nil
		case "connection_error", "error":
			conn.CloseNow()
			return nil, fmt.Errorf("%s: %s", f.Type, f.Payload)
		}
	}
}

// subscribe starts operation id with query and vars (start is the
// protocol's word: "subscribe", or "start" on graphql-ws).
func (c *gqlConn) subscribe(ctx context.Context, start, id, query string, vars map[string]any) error {
	op, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return c.send(ctx, gqlFrame{ID: id, Type: start, Payload: op})
}

func (c *gqlConn) send(ctx context.Context, f gqlFrame) error {
	b, _ := json.Marshal(f)
	return c.conn.Write(ctx, websocket.MessageText, b)
}

func (c *gqlConn) read(ctx context.Context) (gqlFrame, error) {
	var f gqlFrame
	_, b, err := c.conn.Read(ctx)
	if err == nil {
		if err = json.Unmarshal(b, &f); err != nil {
			err = fmt.Errorf("frame %s: %w", b, err)
		}
	}
	return f, err
}

func (c *gqlConn) close() { c.conn.CloseNow() }
