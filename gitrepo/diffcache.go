package gitrepo

import (
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"
)

// diffCacheSize bounds the changed-file lists kept (each a few entries:
// the files one session changed).
const diffCacheSize = 1024

// diffCache keeps DiffFiles' answers between two object ids. Objects are
// content addressed, so the files changed between two of them never
// change: an exploration view read again on every branch's event asks
// the same pairs over and over, and each would cost two git processes.
// Only full object ids are kept; a name (HEAD, a branch) may move.
type diffCache struct {
	lru *lru.Cache[diffKey, []FileChange]
}

type diffKey struct{ commonDir, from, to string }

func newDiffCache() diffCache {
	c, _ := lru.New[diffKey, []FileChange](diffCacheSize) // fails only for a size below 1
	return diffCache{lru: c}
}

func (c diffCache) get(k diffKey) ([]FileChange, bool) {
	if c.lru == nil || !isObjectID(k.from) || !isObjectID(k.to) {
		return nil, false
	}
	f, ok := c.lru.Get(k)
	return slices.Clone(f), ok
}

func (c diffCache) put(k diffKey, files []FileChange) {
	if c.lru != nil && isObjectID(k.from) && isObjectID(k.to) {
		c.lru.Add(k, slices.Clone(files))
	}
}

// isObjectID: a full SHA-1 or SHA-256 object id in lower-case hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
