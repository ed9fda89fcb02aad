//go:build !amd64

package record

// useScanAVX2 is false: scanAVX2 is amd64 assembly.
var useScanAVX2 = false

func scanAVX2(b []byte, out, qout []int32, off, q int32) (n int, bad uint32, qend int32) {
	panic("record: no AVX2 line scan on this architecture")
}
