#include "textflag.h"

// func escapeSSSE3(o []byte, s string) (i, n int)
//
// Per 16 bytes of s: stop before them if one is below 0x20 or above 0x7f
// (one signed compare: those are below 0x20 as signed bytes); store them
// as they are when none is '"' or '\\'; else, per 8-byte half, PSHUFB
// with escapeShuffles[mask of the half's '"' and '\\' bytes] spreads the
// half (lanes 0-7) and a backslash (lane 8 on) into its 8+POPCNT(mask)
// output bytes. Each 16 bytes need 32 bytes of room in o.
TEXT ·escapeSSSE3(SB), NOSPLIT, $0-56
	MOVQ o_base+0(FP), DI
	MOVQ o_len+8(FP), R8
	MOVQ s_base+24(FP), SI
	MOVQ s_len+32(FP), CX
	LEAQ ·escapeShuffles(SB), R11
	MOVQ $0x2222222222222222, AX
	MOVQ AX, X1
	PUNPCKLQDQ X1, X1
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X2
	PUNPCKLQDQ X2, X2
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X3
	PUNPCKLQDQ X3, X3
	XORQ DX, DX
	XORQ BX, BX

loop:
	LEAQ 16(DX), R9
	CMPQ R9, CX
	JHI  done
	LEAQ 32(BX), R9
	CMPQ R9, R8
	JHI  done
	MOVOU (SI)(DX*1), X0
	MOVO X3, X4
	PCMPGTB X0, X4
	PMOVMSKB X4, AX
	TESTL AX, AX
	JNZ  done
	MOVO X0, X5
	PCMPEQB X1, X5
	MOVO X0, X6
	PCMPEQB X2, X6
	POR  X6, X5
	PMOVMSKB X5, AX
	TESTL AX, AX
	JNZ  escape
	MOVOU X0, (DI)(BX*1)
	ADDQ $16, DX
	ADDQ $16, BX
	JMP  loop

escape:
	MOVL AX, R10
	ANDL $0xff, R10
	POPCNTL R10, R12
	SHLL $4, R10
	MOVOU (R11)(R10*1), X8
	MOVO X0, X7
	PUNPCKLQDQ X2, X7
	PSHUFB X8, X7
	MOVOU X7, (DI)(BX*1)
	LEAQ 8(BX)(R12*1), BX
	SHRL $8, AX
	POPCNTL AX, R12
	SHLL $4, AX
	MOVOU (R11)(AX*1), X8
	MOVO X0, X7
	PUNPCKHQDQ X2, X7
	PSHUFB X8, X7
	MOVOU X7, (DI)(BX*1)
	LEAQ 8(BX)(R12*1), BX
	ADDQ $16, DX
	JMP  loop

done:
	MOVQ DX, i+40(FP)
	MOVQ BX, n+48(FP)
	RET
