package crc32c

import (
	"sort"
	"strconv"
	"time"
)

func timeIt(n int, fn func()) float64 {
	start := time.Now()
	for i := 0; i < n; i++ {
		fn()
	}
	return time.Since(start).Seconds()
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func sizeName(n int) string { return strconv.Itoa(n) + "B" }
