// Package gitfile reads and writes git's on-disk formats in process, for
// what a checkpoint does at every turn's end without a git process: the
// index file (read only: git writes it), the trees of an index with some
// entries changed, loose objects (written in parallel by an
// ObjectWriter), commit objects with tuttid's identity and loose refs
// through their .lock file. Anything it does not handle exactly as git
// would is an error (ErrIndexUnsupported, ErrRefBusy), and gitrepo then
// runs git instead.
package gitfile
