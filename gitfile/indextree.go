package gitfile

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// BuildTree writes, as git write-tree would, the tree of the index ix with
// changes applied: a path mapped to an entry is added or replaced, to nil
// removed. Only the directories that hold a change, or whose cache-tree
// entry is invalid, are hashed and written; the others keep the id the
// index's cache-tree records. It returns the top-level tree's id.
func BuildTree(w *ObjectWriter, ix *Index, changes map[string]*IndexEntry) (string, error) {
	entries := make([]IndexEntry, 0, len(ix.Entries)+len(changes))
	applied := map[string]bool{}
	for _, e := range ix.Entries {
		c, ok := changes[e.Path]
		if !ok {
			entries = append(entries, e)
			continue
		}
		applied[e.Path] = true
		if c != nil {
			entries = append(entries, *c)
		}
	}
	if len(applied) < len(changes) {
		for p, c := range changes {
			if c != nil && !applied[p] {
				entries = append(entries, *c)
			}
		}
		slices.SortFunc(entries, func(a, b IndexEntry) int { return strings.Compare(a.Path, b.Path) })
	}
	b := treeBuilder{w: w, trees: ix.trees, dirty: map[string]bool{}}
	for p := range changes {
		for d := parentDir(p); !b.dirty[d]; d = parentDir(d) {
			b.dirty[d] = true
			if d == "" {
				break
			}
		}
	}
	id, err := b.build("", entries)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(id[:]), nil
}

// parentDir is the directory holding p ("" at the top level).
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

type treeBuilder struct {
	w     *ObjectWriter
	trees map[string][20]byte // the cache-tree's valid entries
	dirty map[string]bool     // directories holding a change
}

// treeItem is one entry of a tree object.
type treeItem struct {
	name string
	Mode uint32
	OID  [20]byte
}

// build returns the id of the tree of dir, whose entries (every path
// under it, in path order) are list, queuing it to be written when it is
// not known.
func (b *treeBuilder) build(dir string, list []IndexEntry) ([20]byte, error) {
	if id, ok := b.trees[dir]; ok && !b.dirty[dir] {
		return id, nil
	}
	base := 0
	if dir != "" {
		base = len(dir) + 1
	}
	items := make([]treeItem, 0, min(len(list), 64))
	for i := 0; i < len(list); {
		rest := list[i].Path[base:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			items = append(items, treeItem{name: rest, Mode: list[i].Mode, OID: list[i].OID})
			i++
			continue
		}
		sub := list[i].Path[:base+slash]
		prefix := sub + "/"
		j := i + 1
		for j < len(list) && strings.HasPrefix(list[j].Path, prefix) {
			j++
		}
		id, err := b.build(sub, list[i:j])
		if err != nil {
			return id, err
		}
		items = append(items, treeItem{name: rest[:slash], Mode: 0o40000, OID: id})
		i = j
	}
	// git's order: a directory sorts as if its name ended in "/".
	key := func(t treeItem) string {
		if t.Mode == 0o40000 {
			return t.name + "/"
		}
		return t.name
	}
	slices.SortFunc(items, func(x, y treeItem) int { return strings.Compare(key(x), key(y)) })
	var body bytes.Buffer
	for k, t := range items {
		if k > 0 && items[k-1].name == t.name || t.name == "" {
			// A file and a directory of one name (or an empty name):
			// git would refuse or repair it; let git decide.
			return [20]byte{}, fmt.Errorf("%w: path %q", ErrIndexUnsupported, dir+"/"+t.name)
		}
		body.WriteString(strconv.FormatUint(uint64(t.Mode), 8))
		body.WriteByte(' ')
		body.WriteString(t.name)
		body.WriteByte(0)
		body.Write(t.OID[:])
	}
	return b.w.Put("tree", body.Bytes()), nil
}
