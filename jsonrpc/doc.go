// Package jsonrpc is a JSON-RPC 2.0 peer over one line-delimited stream
// pair (a child process's stdio, or pipes in a test): requests with ids and
// their replies, notifications, requests the other side makes and their
// answers, a bound per call (its context) and a bound per line.
//
// The dialect is the one app-server protocols speak: one JSON object a
// line, and no "jsonrpc" member on either side.
//
// Lines are read whole up to a bound (Conn's maxLine; DefaultMaxLineBytes
// when unset): a reply over it fails its own call (ErrLineTooLong), any
// other over-long line ends the stream (ErrClosed), never a silently
// dropped message. A call may instead take its reply as a stream
// (CallStreamed), unbounded. Each line is read into a buffer of its own,
// never reused, so params and results handed out may be kept without a
// copy (LineRaw).
//
// Where things are: conn.go is the Conn and the calls it makes; reader.go
// reads and dispatches lines; readline.go reads one bounded line;
// overlong.go is what an over-long line does; streamreply.go hands a reply
// to its decoder as it is read; message.go is the wire types; linelimit.go
// the default bound.
//
// The package knows nothing of who is on the other side: what a method
// means, and what a closed stream means to the caller, is the caller's.
package jsonrpc
