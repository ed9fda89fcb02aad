package vfs

import (
	"errors"
	"os"
	"path/filepath"
)

// This file holds BudgetFS's bookkeeping: the LRU ring of idle-closable
// files, the names of open handles, and pinning.

// lruFront makes cf the most recently used. REQUIRES: c.mu held, cf open
// and not pinned.
func (c *BudgetFS) lruFront(cf *budgetFile) {
	if c.lru.next == cf {
		return
	}
	c.lruRemove(cf)
	cf.prev, cf.next = &c.lru, c.lru.next
	c.lru.next.prev = cf
	c.lru.next = cf
}

// lruRemove takes cf out of the ring if it is in it. REQUIRES: c.mu held.
func (c *BudgetFS) lruRemove(cf *budgetFile) {
	if cf.next == nil {
		return
	}
	cf.prev.next, cf.next.prev = cf.next, cf.prev
	cf.prev, cf.next = nil, nil
}

// detachLocked forgets cf's descriptor (the caller closes it).
// REQUIRES: c.mu held, cf.f != nil.
func (c *BudgetFS) detachLocked(cf *budgetFile) {
	cf.f = nil
	c.lruRemove(cf)
	c.open--
}

// evictLocked detaches idle descriptors, least recently used first, until
// the count is within the budget and at least atLeast are detached; it
// returns them for the caller to close outside c.mu. REQUIRES: c.mu held.
func (c *BudgetFS) evictLocked(atLeast int) []File {
	var victims []File
	for cf := c.lru.prev; cf != &c.lru && (c.open > c.max || len(victims) < atLeast); {
		prev := cf.prev
		if cf.users.Load() == 0 {
			victims = append(victims, cf.f)
			c.detachLocked(cf)
			c.stats.Evictions++
		}
		cf = prev
	}
	return victims
}

func closeAll(files []File) {
	for _, f := range files {
		f.Close() // a regular file's close reports no data errors; Sync does
	}
}

// register files cf under key. REQUIRES: c.mu held.
func (c *BudgetFS) register(cf *budgetFile, key string) {
	cf.key = key
	set := c.byName[key]
	if set == nil {
		set = map[*budgetFile]struct{}{}
		c.byName[key] = set
	}
	set[cf] = struct{}{}
	for d := filepath.Dir(key); ; d = filepath.Dir(d) {
		c.dirs[d]++
		if d == filepath.Dir(d) {
			break
		}
	}
}

// unregister removes cf from the names. REQUIRES: c.mu held.
func (c *BudgetFS) unregister(cf *budgetFile) {
	key := cf.key
	cf.key = ""
	if set := c.byName[key]; set != nil {
		delete(set, cf)
		if len(set) == 0 {
			delete(c.byName, key)
		}
	}
	for d := filepath.Dir(key); ; d = filepath.Dir(d) {
		if c.dirs[d]--; c.dirs[d] <= 0 {
			delete(c.dirs, d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
}

// filesUnder lists the handles at key or, if key is a directory holding
// some, below it. REQUIRES: c.mu held.
func (c *BudgetFS) filesUnder(key string) []*budgetFile {
	var out []*budgetFile
	for cf := range c.byName[key] {
		out = append(out, cf)
	}
	if c.dirs[key] == 0 {
		return out
	}
	for k, set := range c.byName {
		if k != key && under(k, key) {
			for cf := range set {
				out = append(out, cf)
			}
		}
	}
	return out
}

// moveLocked renames the handles at or below okey to nkey.
// REQUIRES: c.mu held.
func (c *BudgetFS) moveLocked(okey, nkey string) {
	for _, cf := range c.filesUnder(okey) {
		k := nkey + cf.key[len(okey):]
		c.unregister(cf)
		c.register(cf, k)
	}
}

// pinUnder opens and pins every handle at or below key, before its name
// goes away. A handle whose file is already gone by that name (removed
// behind the BudgetFS's back) cannot be kept and is skipped.
// REQUIRES: c.nameMu held for writing.
func (c *BudgetFS) pinUnder(key string) ([]*budgetFile, error) {
	c.mu.Lock()
	files := c.filesUnder(key)
	c.mu.Unlock()
	var pinned []*budgetFile
	for _, cf := range files {
		if _, err := cf.reopen("pin"); err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrClosed) {
				continue
			}
			c.unpin(pinned)
			return nil, err
		}
		c.mu.Lock()
		if cf.closed {
			c.mu.Unlock()
			cf.release()
			continue
		}
		cf.pinned = true
		c.stats.Pinned++
		c.lruRemove(cf)
		c.mu.Unlock()
		cf.release()
		pinned = append(pinned, cf)
	}
	return pinned, nil
}

// unpin returns handles pinned for an operation that failed to the LRU.
func (c *BudgetFS) unpin(files []*budgetFile) {
	c.mu.Lock()
	for _, cf := range files {
		if cf.pinned && !cf.closed {
			cf.pinned = false
			c.stats.Pinned--
			c.lruFront(cf)
		}
	}
	victims := c.evictLocked(0)
	c.mu.Unlock()
	closeAll(victims)
}

// orphanLocked drops the names of pinned handles whose name is gone: they
// stay open until closed. REQUIRES: c.mu held.
func (c *BudgetFS) orphanLocked(files []*budgetFile) {
	for _, cf := range files {
		if cf.pinned && cf.key != "" {
			c.unregister(cf)
		}
	}
}
