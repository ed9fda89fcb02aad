package record

import "golang.org/x/sys/cpu"

// useScanAVX2 is whether this CPU (and its OS) runs scanAVX2.
var useScanAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1

// scanAVX2 is ScanLines of b (its length a multiple of 32) into out (as
// long as b): it stores the '\n' indexes plus off from out[0] and returns
// how many it stored, and bad, nonzero if a byte other than '\n' was not
// jsonSafe.
//
//go:noescape
func scanAVX2(b []byte, out []int32, off int32) (n int, bad uint32)
