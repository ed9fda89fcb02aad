package record

import "golang.org/x/sys/cpu"

// useScanAVX2 is whether this CPU (and its OS) runs scanAVX2.
var useScanAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasPOPCNT

// scanAVX2 is ScanLines of b (its length a multiple of 32) into out and
// qout (each as long as b): it stores the '\n' indexes plus off from
// out[0], and the '"' and '\\' bytes before each plus q from qout[0], and
// returns how many ends it stored, bad, nonzero if a byte other than '\n'
// was not printable ASCII, and q plus the '"' and '\\' bytes of b.
//
//go:noescape
func scanAVX2(b []byte, out, qout []int32, off, q int32) (n int, bad uint32, qend int32)
