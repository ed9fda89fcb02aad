//go:build !amd64

package record

// useScanAVX2 is false: scanAVX2 is amd64 assembly.
var useScanAVX2 = false

func scanAVX2(b []byte, out []int32, off int32) (n int, bad uint32) {
	panic("record: no AVX2 line scan on this architecture")
}
