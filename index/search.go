package index

// largestLowerBound returns the slot of the largest entry whose key is <=
// target, or -1, given n entries and key(i) nondecreasing. Like Kafka's
// largestLowerBoundSlotFor it first searches the warm last warm entries
// when the target is past the first of them.
func largestLowerBound(n, warm int, target int64, key func(int) int64) int {
	if n == 0 {
		return -1
	}
	firstHot := max(0, n-1-warm)
	if key(firstHot) < target {
		return binarySearch(firstHot, n-1, target, key)
	}
	if key(0) > target {
		return -1
	}
	return binarySearch(0, firstHot, target, key)
}

// binarySearch finds the largest slot in [lo, hi] with key <= target,
// given key(lo) <= target.
func binarySearch(lo, hi int, target int64, key func(int) int64) int {
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if key(mid) <= target {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
