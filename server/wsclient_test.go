package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A small GraphQL-over-WebSocket client for the end-to-end tests, over
// github.com/coder/websocket. It speaks both subprotocols:
//
//	graphql-transport-ws: connection_init → connection_ack; subscribe → next… → complete | error;
//	                      complete (client stop); ping ↔ pong either way
//	graphql-ws (legacy):  connection_init → connection_ack, ka…; start → data… → complete | error;
//	                      stop (client stop); connection_terminate
const (
	protoTransportWS = "graphql-transport-ws"
	protoGraphQLWS   = "graphql-ws"
)

var wsProtocols = []string{protoTransportWS, protoGraphQLWS}

// wsFrame is one protocol message, either way.
type wsFrame struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsResult is one result of a subscription: a next/data payload, or the
// errors of an error message.
type wsResult struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

type wsClient struct {
	t     testing.TB
	proto string
	conn  *websocket.Conn

	ctx    context.Context // cancelled by close; ends the read loop
	cancel context.CancelFunc
	done   chan struct{} // closed when the read loop ends

	// control receives the frames not addressed to a subscription (ka,
	// ping, pong, connection_error...); it drops them when full.
	control chan wsFrame

	// hold is taken by pause: the read loop stops reading the socket
	// before its next message, as a stalled client would.
	hold sync.Mutex

	mu      sync.Mutex
	subs    map[string]chan wsResult
	nextID  int
	running bool // run was called
	paused  bool // hold is taken
}

// wsURL turns the harness's http://host:port into the WebSocket endpoint.
func (h *harness) wsURL() string { return "ws" + strings.TrimPrefix(h.url, "http") + "/query" }

// dialWS opens a connection with proto and header (nil = none) and
// completes connection_init / connection_ack; the read loop is not started
// (see run). On a refused handshake it returns the HTTP response. The
// connection_init payload carries the token of the harness at url.
func dialWS(ctx context.Context, url, proto string, header http.Header) (*wsClient, *http.Response, error) {
	payload := map[string]any{}
	if tok := tokenFor(url); tok != "" {
		payload["Authorization"] = "Bearer " + tok
	}
	return dialWSInit(ctx, url, proto, header, payload)
}

// dialWSInit is dialWS with the given connection_init payload.
func dialWSInit(ctx context.Context, url, proto string, header http.Header, payload map[string]any) (*wsClient, *http.Response, error) {
	initPayload, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, err
	}
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{proto}, HTTPHeader: header})
	if err != nil {
		return nil, resp, err
	}
	if got := conn.Subprotocol(); got != proto {
		conn.CloseNow()
		return nil, resp, fmt.Errorf("server chose subprotocol %q, want %q", got, proto)
	}
	conn.SetReadLimit(8 << 20)
	c := &wsClient{proto: proto, conn: conn, done: make(chan struct{}), control: make(chan wsFrame, 64), subs: map[string]chan wsResult{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if err := c.write(wsFrame{Type: "connection_init", Payload: initPayload}); err != nil {
		c.conn.CloseNow()
		return nil, resp, err
	}
	for {
		f, err := c.read(ctx)
		if err != nil {
			c.conn.CloseNow()
			return nil, resp, fmt.Errorf("waiting for connection_ack: %w", err)
		}
		if f.Type == "connection_ack" {
			return c, resp, nil
		}
		if f.Type != "ka" && f.Type != "ping" {
			c.conn.CloseNow()
			return nil, resp, fmt.Errorf("got %s before connection_ack: %s", f.Type, f.Payload)
		}
	}
}

// ws opens a connection on h with proto, starts its read loop and closes it
// at cleanup; it fails the test on any error.
func (h *harness) ws(proto string) *wsClient {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := dialWS(ctx, h.wsURL(), proto, nil)
	if err != nil {
		h.t.Fatalf("dial %s: %v", proto, err)
	}
	c.t = h.t
	c.run()
	h.t.Cleanup(c.close)
	return c
}

func (c *wsClient) write(f wsFrame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.conn.Write(ctx, websocket.MessageText, b)
}

func (c *wsClient) read(ctx context.Context) (wsFrame, error) {
	_, b, err := c.conn.Read(ctx)
	if err != nil {
		return wsFrame{}, err
	}
	var f wsFrame
	if err := json.Unmarshal(b, &f); err != nil {
		return wsFrame{}, fmt.Errorf("decode frame %s: %w", b, err)
	}
	return f, nil
}

// run starts the read loop: it routes results to their subscription,
// answers pings and ends every subscription when the connection ends.
func (c *wsClient) run() {
	c.mu.Lock()
	c.running = true
	c.mu.Unlock()
	go func() {
		defer close(c.done)
		defer c.finishAll()
		for {
			c.hold.Lock()
			//lint:ignore SA2001 an empty critical section: wait while paused
			c.hold.Unlock()
			f, err := c.read(c.ctx)
			if err != nil {
				return
			}
			switch f.Type {
			case "next", "data":
				var r wsResult
				if err := json.Unmarshal(f.Payload, &r); err != nil {
					r.Errors = []gqlError{{Message: "client: undecodable payload: " + string(f.Payload)}}
				}
				c.deliver(f.ID, r)
			case "error":
				c.deliver(f.ID, wsResult{Errors: decodeErrors(f.Payload)})
				c.finish(f.ID)
			case "complete":
				c.finish(f.ID)
			default:
				if f.Type == "ping" {
					_ = c.write(wsFrame{Type: "pong"})
				}
				select {
				case c.control <- f:
				default:
				}
			}
		}
	}()
}

// pause stops reading from the socket after at most one more message, so
// the server's writes pile up in TCP buffers; resume reads again.
func (c *wsClient) pause() {
	c.hold.Lock()
	c.mu.Lock()
	c.paused = true
	c.mu.Unlock()
}

func (c *wsClient) resume() {
	c.mu.Lock()
	paused := c.paused
	c.paused = false
	c.mu.Unlock()
	if paused {
		c.hold.Unlock()
	}
}

// decodeErrors reads an error message's payload: a list of GraphQL errors
// (graphql-transport-ws, gqlgen's graphql-ws) or a single one.
func decodeErrors(p json.RawMessage) []gqlError {
	var list []gqlError
	if json.Unmarshal(p, &list) == nil {
		return list
	}
	var one gqlError
	if json.Unmarshal(p, &one) == nil {
		return []gqlError{one}
	}
	return []gqlError{{Message: "client: undecodable error payload: " + string(p)}}
}

func (c *wsClient) deliver(id string, r wsResult) {
	c.mu.Lock()
	ch := c.subs[id]
	c.mu.Unlock()
	if ch == nil {
		return
	}
	select { // the subscriber drains its channel; do not hang the loop past close
	case ch <- r:
	case <-c.ctx.Done():
	}
}

func (c *wsClient) finish(id string) {
	c.mu.Lock()
	ch := c.subs[id]
	delete(c.subs, id)
	c.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

func (c *wsClient) finishAll() {
	c.mu.Lock()
	subs := c.subs
	c.subs = map[string]chan wsResult{}
	c.mu.Unlock()
	for _, ch := range subs {
		close(ch)
	}
}

// wsSub is one subscription; C is closed on complete, after an error, or
// when the connection ends.
type wsSub struct {
	c  *wsClient
	id string
	C  <-chan wsResult
}

// subscribe sends the operation (subscribe or start by subprotocol). The
// server registers it asynchronously: the protocols have no message that
// confirms it; the activity subscription's first event, SUBSCRIBED, does.
func (c *wsClient) subscribe(query string, vars map[string]any) *wsSub {
	payload, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	ch := make(chan wsResult, 1024)
	c.subs[id] = ch
	c.mu.Unlock()
	typ := "subscribe"
	if c.proto == protoGraphQLWS {
		typ = "start"
	}
	if err := c.write(wsFrame{ID: id, Type: typ, Payload: payload}); err != nil {
		c.t.Fatalf("send %s: %v", typ, err)
	}
	return &wsSub{c: c, id: id, C: ch}
}

// stop asks the server to end the subscription (complete or stop); C is
// closed when the server confirms with complete.
func (s *wsSub) stop() {
	typ := "complete"
	if s.c.proto == protoGraphQLWS {
		typ = "stop"
	}
	if err := s.c.write(wsFrame{ID: s.id, Type: typ}); err != nil {
		s.c.t.Errorf("send %s: %v", typ, err)
	}
}

// next returns the next result, or ok=false when C is closed or timeout
// passes (timedOut tells which).
func (s *wsSub) next(timeout time.Duration) (r wsResult, ok, timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r, ok := <-s.C:
		return r, ok, false
	case <-timer.C:
		return wsResult{}, false, true
	}
}

// close ends the connection with a normal closure and waits for the read
// loop; it is idempotent.
func (c *wsClient) close() {
	c.mu.Lock()
	running := c.running
	c.mu.Unlock()
	if !running {
		c.cancel()
		c.conn.CloseNow()
		return
	}
	select {
	case <-c.done:
		return
	default:
	}
	c.resume()
	err := c.conn.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	<-c.done
	if err != nil && !errors.Is(err, context.Canceled) && websocket.CloseStatus(err) == -1 && c.t != nil {
		// Closing races with the server closing; only log.
		c.t.Logf("ws close: %v", err)
	}
}
