package vfs

import (
	"strings"
	"sync/atomic"
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

	count atomic.Int64
	fired atomic.Int64
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
	if n := int(j.count.Add(1)); n == j.N || (j.Persist && n > j.N) {
		j.fired.Add(1)
		return j.Short, j.Err
	}
	return false, nil
}

// Count returns how many operations of the kind were seen.
func (j *NthInjector) Count() int { return int(j.count.Load()) }

// Fired returns how many operations were failed.
func (j *NthInjector) Fired() int { return int(j.fired.Load()) }

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
