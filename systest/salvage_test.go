package systest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// countServed opens dir and counts the records of topic-0 a reader gets
// (each checked against the model).
func countServed(t *testing.T, dir, topic string, m model) int {
	t.Helper()
	lg := testutil.NewLogger()
	st, err := openStore(t, dir, lg.Entry)
	if err != nil {
		t.Fatalf("open %s: %v\n%s", dir, err, lg.Buf)
	}
	defer st.Close()
	return len(readPartition(t, st, topic, 0, m[tpKey(topic, 0)]).offsets)
}

// TestSalvageDamageTable runs partfs salvage on every case of the damage
// table: the copy passes partfs check, serves only written records (the
// model's), and never fewer than a normal recovery keeps. The table of
// records kept by each is logged.
func TestSalvageDamageTable(t *testing.T) {
	root := t.TempDir()
	var table strings.Builder
	fmt.Fprintf(&table, "%-80s %9s %8s %7s\n", "case", "recovery", "salvage", "skipped")
	for i, tc := range damageCases("") {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(root, fmt.Sprint(i))
			m := buildDataDir(t, dir)
			tc := damageCases(dir)[i]
			applyDamage(t, dir, &tc)
			rec := dir + ".recovered"
			run(t, "cp", "-a", dir, rec)
			dst := dir + ".salvaged"
			out, code := runPartfs(t, "salvage", dir, dst)
			if code != 0 && code != 1 {
				t.Fatalf("partfs salvage exit %d:\n%s", code, out)
			}
			t.Logf("partfs salvage:\n%s", out)
			if out, code := runPartfs(t, "check", dst); code != 0 {
				t.Fatalf("partfs check of the salvaged copy: exit %d\n%s", code, out)
			}
			recovered, salvaged := countServed(t, rec, tc.topic, m), countServed(t, dst, tc.topic, m)
			if salvaged < recovered {
				t.Errorf("salvage kept %d records, recovery %d", salvaged, recovered)
			}
			skipped := strings.Count(out, ": skipped positions ")
			if code == 1 != (skipped > 0) {
				t.Errorf("exit %d with %d regions reported", code, skipped)
			}
			fmt.Fprintf(&table, "%-80s %9d %8d %7d\n", tc.name, recovered, salvaged, skipped)
		})
	}
	t.Logf("records of the damaged topic kept:\n%s", table.String())
}
