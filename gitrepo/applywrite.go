package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// An apply writes the target's files all or nothing (applyswap.go): the
// state before is kept under a ref, the new files are staged whole beside
// the checkout, and only then is each of the target's files swapped by
// renames; any failure puts back what was swapped. ApplyWrite is what a
// journal records so that a crash part way is undone at the next start
// (Repo.SettleApply).

// ApplyWrite is one apply's writing of the target's files.
type ApplyWrite struct {
	// ID names the write: its staging directory and its kept ref. Its
	// decimal time prefix makes IDs sort in the order they were made.
	ID string
	// Root is the target's top level.
	Root string
	// Staging holds the merged files (new/<path>) before they are moved in
	// and the target's replaced files (old/<path>) until the write is over.
	Staging string
	// KeptRef keeps KeptCommit: the target's files before the apply
	// (tracked, untracked, uncommitted edits; the snapshot), first parent
	// its HEAD then.
	KeptRef, KeptCommit string
	// Merged is the tree written.
	Merged string
	// Paths are the paths written, in git's order.
	Paths []PathWrite
}

// PathWrite is one path an apply writes.
type PathWrite struct {
	// Path is slash-separated, relative to Root.
	Path string
	// Old: the target has a file there, moved to Staging/old/Path.
	Old bool
	// New: the merged files have one, staged at Staging/new/Path.
	New bool
}

// ApplyState is how far an ApplyWrite went, as its journal records it.
type ApplyState string

const (
	// ApplyStaging: the new files are being staged; the target's files
	// are untouched. Settling removes the staging directory.
	ApplyStaging ApplyState = "staging"
	// ApplySwapping: the target's files are being swapped. Settling undoes
	// the swap.
	ApplySwapping ApplyState = "swapping"
	// ApplyDone: every file was swapped and checked; only the staging
	// directory is left to remove.
	ApplyDone ApplyState = "done"
)

// ApplyJournal records an apply's write where a later start finds it.
// Record is called with ApplyStaging before anything is written, with
// ApplySwapping before the first of the target's files is touched, and
// with ApplyDone once they all are; a failure of any stops the apply and
// leaves (or puts back) the target's files as they were. Forget is called
// once the write is settled (applied or undone) and its staging removed.
type ApplyJournal interface {
	Record(ctx context.Context, w ApplyWrite, state ApplyState) error
	Forget(ctx context.Context, w ApplyWrite) error
}

// StepOp is a kind of file step of an apply.
type StepOp string

const (
	// StepStage: the merged files were written to the staging directory.
	StepStage StepOp = "stage"
	// StepAside: one of the target's files is moved to the staging directory.
	StepAside StepOp = "aside"
	// StepPlace: one merged file is moved in.
	StepPlace StepOp = "place"
	// StepCheck: every file is in; each is checked to be the one staged.
	StepCheck StepOp = "check"
	// StepUnplace: undoing, a file moved in is removed.
	StepUnplace StepOp = "unplace"
	// StepRestore: undoing, a file moved aside is put back.
	StepRestore StepOp = "restore"
	// StepFromKept: undoing, a file that could not be put back is written
	// from the kept commit.
	StepFromKept StepOp = "from-kept"
)

// ApplyStep is one file step of an apply, for ApplyOptions.Step.
type ApplyStep struct {
	Op   StepOp
	Path string
	// N counts the steps of the write, this one included, from 1.
	N int
}

// ApplyError is a write that failed: the target's files are as they were
// unless NotRestored names some. It matches ErrApplyWrite.
type ApplyError struct {
	KeptRef, KeptCommit string
	// NotRestored lists the paths that could not be put back as they
	// were; the journal still holds the write, and settling it again
	// (the next start) tries again.
	NotRestored []string
	// DiskFull: the file system had no room left (or the quota was
	// reached).
	DiskFull bool
	Err      error
}

// ErrApplyWrite: writing an apply's files failed; see *ApplyError.
var ErrApplyWrite = errors.New("apply: writing the files failed")

func (e *ApplyError) Error() string {
	state := "the files are as they were"
	if len(e.NotRestored) > 0 {
		state = fmt.Sprintf("%d paths not put back (%s)", len(e.NotRestored), shortList(e.NotRestored, 10))
	}
	return fmt.Sprintf("%s: %v; %s; the files before the apply are kept as %s (%s)",
		ErrApplyWrite, e.Err, state, e.KeptCommit, e.KeptRef)
}

func (e *ApplyError) Is(target error) bool { return target == ErrApplyWrite }

func (e *ApplyError) Unwrap() error { return e.Err }

// shortList joins the first n of paths, saying how many more there are.
func shortList(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:n], ", "), len(paths)-n)
}

// diskFull reports whether err is a file system out of room.
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// EncodePaths packs paths for a journal: a flag byte (o: Old, n: New,
// b: both) then the path, NUL-terminated; paths are bytes to git, and
// JSON would change those that are not UTF-8.
func EncodePaths(paths []PathWrite) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		switch {
		case p.Old && p.New:
			b.WriteByte('b')
		case p.Old:
			b.WriteByte('o')
		default:
			b.WriteByte('n')
		}
		b.WriteString(p.Path)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// DecodePaths reads what EncodePaths wrote.
func DecodePaths(data []byte) ([]PathWrite, error) {
	var out []PathWrite
	for len(data) > 0 {
		end := bytes.IndexByte(data, 0)
		if end < 1 {
			return nil, fmt.Errorf("%w: journal paths: bad record", ErrInvalidInput)
		}
		p := PathWrite{Path: string(data[1:end])}
		switch data[0] {
		case 'b':
			p.Old, p.New = true, true
		case 'o':
			p.Old = true
		case 'n':
			p.New = true
		default:
			return nil, fmt.Errorf("%w: journal paths: flag %q", ErrInvalidInput, data[0])
		}
		out = append(out, p)
		data = data[end+1:]
	}
	return out, nil
}
