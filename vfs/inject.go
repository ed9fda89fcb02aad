package vfs

import (
	"strings"
	"sync"
)

// NthInjector fails the Nth operation of one kind (counting from 1; Op
// OpAny counts every kind), and with Persist every later one too. Filter,
// when set, limits counting to names containing it. It is safe for
// concurrent use.
type NthInjector struct {
	Op      Op
	N       int
	Err     error
	Short   bool   // for OpWrite: write about half, then fail (ENOSPC)
	Persist bool   // keep failing after the Nth operation
	Filter  string // count only names containing Filter ("" = all)

	mu    sync.Mutex
	count int
	fired int
}

// FailNth returns an injector failing the nth operation of kind op with err.
func FailNth(op Op, n int, err error) *NthInjector {
	return &NthInjector{Op: op, N: n, Err: err}
}

// MaybeFail implements Injector.
func (j *NthInjector) MaybeFail(op Op, name string) (bool, error) {
	if (j.Op != OpAny && op != j.Op) || (j.Filter != "" && !strings.Contains(name, j.Filter)) {
		return false, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.count++
	if j.count == j.N || (j.Persist && j.count > j.N) {
		j.fired++
		return j.Short, j.Err
	}
	return false, nil
}

// Count returns how many operations of the kind were seen.
func (j *NthInjector) Count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.count
}

// Fired returns how many operations were failed.
func (j *NthInjector) Fired() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.fired
}

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(op Op, name string) (short bool, err error)

// MaybeFail implements Injector.
func (f InjectorFunc) MaybeFail(op Op, name string) (bool, error) { return f(op, name) }

// OpAny makes an NthInjector count operations of every kind.
const OpAny Op = -1

// String names the operation kind.
func (op Op) String() string {
	names := [...]string{"write", "sync", "syncdir", "rename", "create", "remove", "truncate", "read"}
	if op >= 0 && int(op) < len(names) {
		return names[op]
	}
	if op == OpAny {
		return "any"
	}
	return "op?"
}
