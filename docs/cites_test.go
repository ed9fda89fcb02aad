package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// citeRE matches a cite of a numbered section of the contract or of the
// Kafka format reference: "docs/spec.md §3", "SPEC §2–5", "kafka-format.md
// §6", also when a comment wraps between the file and the section.
var citeRE = regexp.MustCompile(`(SPEC|spec\.md|kafka-format\.md)` + "`?" + `\s*(?:(?://|#)\s*)?(?:§|section )\s*(\d+)(?:\s*[–-]\s*(\d+))?`)

// outsideRE matches a reference to the shared folder the documents were
// copied from, which a clone of the repository does not have.
var outsideRE = regexp.MustCompile(`\.\./` + `shared\b|/work/` + `shared\b`)

// sections returns the numbers of the "## N. Title" headings of doc.
func sections(t *testing.T, doc string) map[int]bool {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\d+)\.`).FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		got[n] = true
	}
	if len(got) == 0 {
		t.Fatalf("%s has no numbered sections", doc)
	}
	return got
}

// repoFiles calls fn with every text file of the repository a reader might
// follow a cite from: Go files, documents and scripts.
func repoFiles(t *testing.T, fn func(path, text string)) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".sh", "":
		default:
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.IndexByte(string(b), 0) < 0 {
			fn(path, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCitesResolve fails on a cite of a section that docs/spec.md or
// docs/kafka-format.md lacks, and on a reference to the shared folder
// outside the repository.
func TestCitesResolve(t *testing.T) {
	have := map[string]map[int]bool{
		"spec":         sections(t, "spec.md"),
		"kafka-format": sections(t, "kafka-format.md"),
	}
	cites := 0
	repoFiles(t, func(path, text string) {
		for _, m := range citeRE.FindAllStringSubmatchIndex(text, -1) {
			doc, from := "spec", atoi(text[m[4]:m[5]])
			if text[m[2]:m[3]] == "kafka-format.md" {
				doc = "kafka-format"
			}
			to := from
			if m[6] >= 0 {
				to = atoi(text[m[6]:m[7]])
			}
			line := 1 + strings.Count(text[:m[0]], "\n")
			for n := from; n <= to; n++ {
				cites++
				if !have[doc][n] {
					t.Errorf("%s:%d: %q cites §%d, which docs/%s.md lacks", path, line, text[m[0]:m[1]], n, doc)
				}
			}
		}
		for _, m := range outsideRE.FindAllStringIndex(text, -1) {
			line := 1 + strings.Count(text[:m[0]], "\n")
			t.Errorf("%s:%d: %q points outside the repository; cite docs/ instead", path, line, text[m[0]:m[1]])
		}
	})
	t.Logf("%d cites resolve", cites)
	if cites < 50 {
		t.Errorf("found %d cites; the pattern no longer matches how the repository cites", cites)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestCitePattern checks what citeRE takes for a cite.
func TestCitePattern(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"docs/spec.md §3", []string{"spec.md", "3", ""}},
		{"(SPEC §2–5, and more)", []string{"SPEC", "2", "5"}},
		{"see kafka-format.md\n// §7 for", []string{"kafka-format.md", "7", ""}},
		{"`docs/spec.md` §9", []string{"spec.md", "9", ""}},
		{"rendered as SPEC section 3 renders", []string{"SPEC", "3", ""}},
	} {
		m := citeRE.FindStringSubmatch(tc.in)
		if m == nil || m[1] != tc.want[0] || m[2] != tc.want[1] || m[3] != tc.want[2] {
			t.Errorf("%q: got %q, want %q", tc.in, m, tc.want)
		}
	}
	if citeRE.MatchString("RFC 8878 §3.1") {
		t.Error("an RFC's section taken for a cite")
	}
}
