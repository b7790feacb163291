package gitfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The index is read in process (never written: git writes it) so that a
// snapshot can build its trees without two more git processes, each of
// which reads and rewrites the whole index (indextree.go). The format is
// git's Documentation/gitformat-index.txt, versions 2 to 4. An index this
// reader does not fully understand (a split or sparse index, entries in
// conflict, skip-worktree or intent-to-add entries, another hash) is
// ErrIndexUnsupported, and the snapshot goes through git as before.

var ErrIndexUnsupported = errors.New("index not readable in process")

// IndexEntry is one stage-0 entry of an index.
type IndexEntry struct {
	Path string
	Mode uint32
	OID  [20]byte
}

// Index is what a snapshot needs of an index: its entries in path
// order and the trees its cache-tree extension still knows.
type Index struct {
	Entries []IndexEntry
	// trees maps a directory ("" for the top level, else "a/b") to its
	// tree id, for the directories whose cache-tree entry is valid.
	trees map[string][20]byte
}

// ReadIndex reads the index at path.
func ReadIndex(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseIndex(b)
}

func parseIndex(b []byte) (*Index, error) {
	bad := func(why string) (*Index, error) {
		return nil, fmt.Errorf("%w: %s", ErrIndexUnsupported, why)
	}
	if len(b) < 12+20 || string(b[:4]) != "DIRC" {
		return bad("no index header")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return bad("version " + strconv.Itoa(int(version)))
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	body := b[:len(b)-20] // the trailing checksum
	ix := &Index{Entries: make([]IndexEntry, 0, n), trees: map[string][20]byte{}}
	pos := 12
	var prev []byte
	for i := 0; i < n; i++ {
		const fixed = 62 // stat data (40), id (20), flags (2)
		if pos+fixed > len(body) {
			return bad("entry past the end")
		}
		start := pos
		e := IndexEntry{Mode: binary.BigEndian.Uint32(b[pos+24 : pos+28])}
		copy(e.OID[:], b[pos+40:pos+60])
		flags := binary.BigEndian.Uint16(b[pos+60 : pos+62])
		pos += fixed
		if flags&0x3000 != 0 {
			return bad("an entry in conflict")
		}
		if flags&0x4000 != 0 {
			if version < 3 || pos+2 > len(body) {
				return bad("extended flags")
			}
			// skip-worktree and intent-to-add entries are not what
			// write-tree would write.
			if binary.BigEndian.Uint16(b[pos:pos+2])&0x6000 != 0 {
				return bad("skip-worktree or intent-to-add entry")
			}
			pos += 2
		}
		var name []byte
		if version == 4 {
			strip, used := readOffsetVarint(body[pos:])
			if used == 0 || strip > uint64(len(prev)) {
				return bad("path prefix")
			}
			pos += used
			end := bytes.IndexByte(body[pos:], 0)
			if end < 0 {
				return bad("path past the end")
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], body[pos:pos+end]...)
			pos += end + 1
		} else {
			end := bytes.IndexByte(body[pos:], 0)
			if end < 0 {
				return bad("path past the end")
			}
			name = body[pos : pos+end]
			// NUL-padded to a multiple of 8 from the entry's start.
			pos = start + (pos-start+end+8)&^7
		}
		prev = name
		switch e.Mode &^ 0o777 {
		case 0o100000, 0o120000, 0o160000:
		default:
			return bad("entry mode " + strconv.FormatUint(uint64(e.Mode), 8)) // a sparse directory entry
		}
		e.Path = string(name)
		ix.Entries = append(ix.Entries, e)
	}
	for pos+8 <= len(body) {
		sig := string(b[pos : pos+4])
		size := int(binary.BigEndian.Uint32(b[pos+4 : pos+8]))
		pos += 8
		if size < 0 || pos+size > len(body) {
			return bad("extension past the end")
		}
		data := b[pos : pos+size]
		pos += size
		switch {
		case sig == "TREE":
			if err := parseCacheTree(data, ix.trees); err != nil {
				return bad(err.Error())
			}
		case sig[0] < 'A' || sig[0] > 'Z':
			// A required extension this reader does not know (a split
			// index's "link", a sparse index's "sdir").
			return bad("extension " + sig)
		}
	}
	return ix, nil
}

// readOffsetVarint reads git's offset varint (varint.c), returning the
// value and the bytes used (0: malformed).
func readOffsetVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || val >= 1<<56 {
			return 0, 0
		}
		val++
		c = b[i]
		i++
		val = val<<7 | uint64(c&127)
	}
	return val, i
}

// parseCacheTree reads the TREE extension: in pre-order, each directory's
// name (relative to its parent), its entry count (-1 when invalid), its
// number of subdirectories, and its id when valid.
func parseCacheTree(data []byte, into map[string][20]byte) error {
	pos := 0
	var walk func(dir string) error
	walk = func(dir string) error {
		end := bytes.IndexByte(data[pos:], 0)
		if end < 0 {
			return errors.New("cache-tree name")
		}
		name := string(data[pos : pos+end])
		pos += end + 1
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			return errors.New("cache-tree counts")
		}
		count, sub, ok := bytes.Cut(data[pos:pos+nl], []byte(" "))
		pos += nl + 1
		entries, err1 := strconv.Atoi(string(count))
		subtrees, err2 := strconv.Atoi(string(sub))
		if !ok || err1 != nil || err2 != nil || subtrees < 0 {
			return errors.New("cache-tree counts")
		}
		path := name
		if dir != "" {
			path = dir + "/" + name
		}
		if entries >= 0 {
			if pos+20 > len(data) {
				return errors.New("cache-tree id")
			}
			into[path] = [20]byte(data[pos : pos+20])
			pos += 20
		}
		for i := 0; i < subtrees; i++ {
			if err := walk(path); err != nil {
				return err
			}
		}
		return nil
	}
	if len(data) == 0 {
		return nil
	}
	return walk("")
}

// lookup finds p among the entries (in path order).
func (ix *Index) Lookup(p string) (IndexEntry, bool) {
	i, ok := slices.BinarySearchFunc(ix.Entries, p, func(e IndexEntry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return IndexEntry{}, false
	}
	return ix.Entries[i], true
}
