package compact

import (
	"math"
	"reflect"
	"testing"

	"github.com/partfs/partfs/partlog"
)

// fakeTimes serves segment timestamps from maps keyed by base offset.
type fakeTimes struct{ largest, first map[int64]int64 }

func (f fakeTimes) LargestTimestamp(s partlog.Segment) int64 { return f.largest[s.Base] }
func (f fakeTimes) FirstBatchTimestamp(s partlog.Segment) int64 {
	if ts, ok := f.first[s.Base]; ok {
		return ts
	}
	return -1
}

// segsOf builds segments with the given bases and sizes; the last is active.
func segsOf(bases []int64, sizes []int64, end int64) []partlog.Segment {
	segs := make([]partlog.Segment, len(bases))
	for i := range bases {
		next := end
		if i+1 < len(bases) {
			next = bases[i+1]
		}
		segs[i] = partlog.Segment{Base: bases[i], Next: next, Size: sizes[i], ID: uint64(i + 1)}
	}
	return segs
}

func TestCleanableRange(t *testing.T) {
	segs := segsOf([]int64{0, 100, 200, 300}, []int64{1000, 1000, 2000, 50}, 310)
	cfg := DefaultLogConfig()
	none := fakeTimes{}
	cases := []struct {
		name       string
		checkpoint int64
		cfg        func(*LogConfig)
		times      fakeTimes
		now        int64
		want       Cleanable
		eligible   bool
	}{
		{name: "no checkpoint", checkpoint: 0, times: none,
			want: Cleanable{FirstDirty: 0, FirstUncleanable: 300, CleanableBytes: 4000, Ratio: 1}, eligible: true},
		{name: "half clean", checkpoint: 200, times: none,
			want: Cleanable{FirstDirty: 200, FirstUncleanable: 300, CleanBytes: 2000, CleanableBytes: 2000, Ratio: 0.5}, eligible: false},
		{name: "mostly clean", checkpoint: 100, times: none,
			want: Cleanable{FirstDirty: 100, FirstUncleanable: 300, CleanBytes: 1000, CleanableBytes: 3000, Ratio: 0.75}, eligible: true},
		{name: "checkpoint past the end resets", checkpoint: 999, times: none,
			want: Cleanable{FirstDirty: 0, FirstUncleanable: 300, CleanableBytes: 4000, Ratio: 1}, eligible: true},
		{name: "all clean", checkpoint: 300, times: none,
			want: Cleanable{FirstDirty: 300, FirstUncleanable: 300, CleanBytes: 4000}, eligible: false},
		{name: "min lag holds back young segments", checkpoint: 0, now: 10000,
			cfg:   func(c *LogConfig) { c.MinCompactionLagMs = 5000 },
			times: fakeTimes{largest: map[int64]int64{0: 1000, 100: 6000, 200: 7000}},
			want:  Cleanable{FirstDirty: 0, FirstUncleanable: 100, CleanableBytes: 1000, Ratio: 1}, eligible: true},
		{name: "max lag forces a clean below the ratio", checkpoint: 200, now: 10000,
			cfg:   func(c *LogConfig) { c.MaxCompactionLagMs = 3000 },
			times: fakeTimes{first: map[int64]int64{200: 4000}},
			want:  Cleanable{FirstDirty: 200, FirstUncleanable: 300, CleanBytes: 2000, CleanableBytes: 2000, Ratio: 0.5, CompactionDelay: 3000}, eligible: true},
		{name: "max lag not reached", checkpoint: 200, now: 10000,
			cfg:   func(c *LogConfig) { c.MaxCompactionLagMs = 8000 },
			times: fakeTimes{first: map[int64]int64{200: 4000}},
			want:  Cleanable{FirstDirty: 200, FirstUncleanable: 300, CleanBytes: 2000, CleanableBytes: 2000, Ratio: 0.5}, eligible: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			got := cleanableRange(segs, tc.checkpoint, 0, tc.now, c, tc.times)
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
			if got.Eligible(c) != tc.eligible {
				t.Fatalf("Eligible = %v, want %v", got.Eligible(c), tc.eligible)
			}
		})
	}
}

func TestGroupSegmentsBySize(t *testing.T) {
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 2500
	cfg.SegmentIndexBytes = 1 << 20
	segs := segsOf([]int64{0, 100, 200, 300, 400}, []int64{1000, 1000, 1000, 0, 2500}, 500)
	got := bases(groupSegmentsBySize(segs, cfg, 500))
	want := [][]int64{{0, 100}, {200, 300}, {400}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("by log size: got %v, want %v", got, want)
	}

	cfg.SegmentBytes = 1 << 30
	cfg.IndexIntervalBytes = 100
	cfg.SegmentIndexBytes = 8 * 21 // one 1000-byte segment needs 11 entries: two do not fit
	if got := bases(groupSegmentsBySize(segs[:3], cfg, 300)); !reflect.DeepEqual(got, [][]int64{{0}, {100}, {200}}) {
		t.Fatalf("by index size: got %v", got)
	}

	cfg = DefaultLogConfig()
	wide := segsOf([]int64{0, 10, 20, math.MaxInt32 + 30}, []int64{10, 10, 10, 10}, math.MaxInt32+100)
	if got := bases(groupSegmentsBySize(wide, cfg, math.MaxInt32+100)); !reflect.DeepEqual(got, [][]int64{{0, 10}, {20}, {math.MaxInt32 + 30}}) {
		t.Fatalf("by offset range: got %v", got)
	}
}

func bases(groups [][]partlog.Segment) [][]int64 {
	var out [][]int64
	for _, g := range groups {
		var b []int64
		for _, s := range g {
			b = append(b, s.Base)
		}
		out = append(out, b)
	}
	return out
}
