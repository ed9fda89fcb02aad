#include "textflag.h"

// func scanAVX2(b []byte, out, qout []int32, off, q int32) (n int, bad uint32, qend int32)
//
// Per 32 bytes: a mask of the '\n' bytes and one of the '"' and '\\'
// bytes. Each '\n' index is stored in turn (TZCNT, then BLSR clears the
// lowest bit), with the count of quote bytes below it (the quote mask
// under BLSI-1, POPCNT) plus those of the blocks before (R11). ORed into
// Y5: the bytes that are not '\n' and are below 0x20 or above 0x7f (one
// signed compare: those are below 0x20 as signed bytes).
TEXT ·scanAVX2(SB), NOSPLIT, $0-96
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ out_base+24(FP), DI
	MOVQ qout_base+48(FP), R13
	MOVL off+72(FP), R8
	MOVL q+76(FP), R11
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

loop:
	CMPQ DX, CX
	JAE  done
	VMOVDQU (SI)(DX*1), Y0
	VPCMPEQB Y0, Y1, Y6
	VPCMPGTB Y0, Y2, Y7
	VPANDN Y7, Y6, Y7
	VPOR Y7, Y5, Y5
	VPCMPEQB Y0, Y3, Y8
	VPCMPEQB Y0, Y4, Y9
	VPOR Y8, Y9, Y8
	VPMOVMSKB Y8, R12
	VPMOVMSKB Y6, AX
	TESTL AX, AX
	JZ   next

bits:
	TZCNTL AX, BX
	ADDL DX, BX
	ADDL R8, BX
	MOVL BX, (DI)
	ADDQ $4, DI
	BLSIL AX, R10
	DECL R10
	ANDL R12, R10
	POPCNTL R10, R10
	ADDL R11, R10
	MOVL R10, (R13)
	ADDQ $4, R13
	BLSRL AX, AX
	JNZ  bits

next:
	POPCNTL R12, R12
	ADDL R12, R11
	ADDQ $32, DX
	JMP  loop

done:
	VPMOVMSKB Y5, AX
	VZEROUPPER
	SUBQ R9, DI
	SHRQ $2, DI
	MOVQ DI, n+80(FP)
	MOVL AX, bad+88(FP)
	MOVL R11, qend+92(FP)
	RET
