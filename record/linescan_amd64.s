#include "textflag.h"

// func scanAVX2(b []byte, out []int32, off int32) (n int, bad uint32)
//
// Per 32 bytes: a mask of the '\n' bytes, whose indexes are stored one by
// one (TZCNT, then BLSR clears the lowest bit); and, ORed into Y5, the
// bytes that are not '\n' and are below 0x20 or above 0x7f (one signed
// compare: those are below 0x20 as signed bytes), '"' or '\\'.
TEXT ·scanAVX2(SB), NOSPLIT, $0-68
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ out_base+24(FP), DI
	MOVL off+48(FP), R8
	MOVQ DI, R9
	MOVL $0x0a, AX
	MOVD AX, X1
	VPBROADCASTB X1, Y1
	MOVL $0x20, AX
	MOVD AX, X2
	VPBROADCASTB X2, Y2
	MOVL $0x22, AX
	MOVD AX, X3
	VPBROADCASTB X3, Y3
	MOVL $0x5c, AX
	MOVD AX, X4
	VPBROADCASTB X4, Y4
	VPXOR Y5, Y5, Y5
	XORQ DX, DX

loop64:
	LEAQ 64(DX), R10
	CMPQ R10, CX
	JA   loop
	VMOVDQU (SI)(DX*1), Y0
	VMOVDQU 32(SI)(DX*1), Y10
	VPCMPEQB Y0, Y1, Y6
	VPCMPEQB Y10, Y1, Y11
	VPCMPGTB Y0, Y2, Y7
	VPCMPGTB Y10, Y2, Y12
	VPANDN Y7, Y6, Y7
	VPANDN Y12, Y11, Y12
	VPCMPEQB Y0, Y3, Y8
	VPCMPEQB Y0, Y4, Y9
	VPOR Y8, Y9, Y8
	VPOR Y7, Y8, Y7
	VPCMPEQB Y10, Y3, Y8
	VPCMPEQB Y10, Y4, Y9
	VPOR Y8, Y9, Y8
	VPOR Y12, Y8, Y12
	VPOR Y7, Y12, Y7
	VPOR Y7, Y5, Y5
	VPMOVMSKB Y6, AX
	VPMOVMSKB Y11, BX
	SHLQ $32, BX
	ORQ  BX, AX
	JZ   next64

bits64:
	TZCNTQ AX, BX
	ADDL DX, BX
	ADDL R8, BX
	MOVL BX, (DI)
	ADDQ $4, DI
	BLSRQ AX, AX
	JNZ  bits64

next64:
	MOVQ R10, DX
	JMP  loop64

loop:
	CMPQ DX, CX
	JAE  done
	VMOVDQU (SI)(DX*1), Y0
	VPCMPEQB Y0, Y1, Y6
	VPCMPGTB Y0, Y2, Y7
	VPANDN Y7, Y6, Y7
	VPCMPEQB Y0, Y3, Y8
	VPCMPEQB Y0, Y4, Y9
	VPOR Y8, Y9, Y8
	VPOR Y7, Y8, Y7
	VPOR Y7, Y5, Y5
	VPMOVMSKB Y6, AX
	TESTL AX, AX
	JZ   next

bits:
	TZCNTL AX, BX
	ADDL DX, BX
	ADDL R8, BX
	MOVL BX, (DI)
	ADDQ $4, DI
	BLSRL AX, AX
	JNZ  bits

next:
	ADDQ $32, DX
	JMP  loop

done:
	VPMOVMSKB Y5, AX
	VZEROUPPER
	SUBQ R9, DI
	SHRQ $2, DI
	MOVQ DI, n+56(FP)
	MOVL AX, bad+64(FP)
	RET
