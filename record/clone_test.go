package record

import (
	"reflect"
	"testing"
)

// TestCloneSharesNothing: a clone equals its record, keeps null and empty
// apart, and is unchanged when the record's buffers are overwritten.
func TestCloneSharesNothing(t *testing.T) {
	key, val, hv := []byte("k"), []byte{}, []byte("hv")
	r := Record{Offset: 7, Timestamp: 9, Key: key, Value: val, Headers: []Header{{Key: "a", Value: hv}, {Key: "n"}}}
	c := r.Clone()
	if !reflect.DeepEqual(c, r) {
		t.Fatalf("clone %+v, want %+v", c, r)
	}
	if c.Value == nil || c.Headers[1].Value != nil {
		t.Fatalf("empty value became null or null header value became empty: %+v", c)
	}
	key[0], hv[0] = 'X', 'X'
	r.Headers[0].Key = "changed"
	if string(c.Key) != "k" || string(c.Headers[0].Value) != "hv" || c.Headers[0].Key != "a" {
		t.Fatalf("clone shares memory with the record: %+v", c)
	}
	if n := (&Record{Offset: 1}).Clone(); n.Key != nil || n.Value != nil || n.Headers != nil {
		t.Fatalf("null record cloned to %+v", n)
	}
}
