/* Two functions as -finstrument-functions compiles them, each laid out so
 * that its enter hook call starts on the last byte of a 16-byte block,
 * where no single atomic store can replace the whole call, while its exit
 * hook call starts a block and becomes a NOP.
 *
 * unpatchable_enter: the enter call is `call *GOT(%rip)` (ff 15 disp32, as
 *   -fno-plt compiles it). sonde leaves it calling the hook (counted as
 *   unpatchable). The shop's request handler Shop::product had this
 *   position (its enter call, a direct one then, at 0x206cf).
 * redirected_enter: the enter call is `call hook@PLT` (e8 rel32). Its rel32
 *   lies in the next aligned word: sonde keeps the e8 and stores a new
 *   rel32 that reaches a `ret` next to the program's code. */
	.text
	.p2align 4
	.globl	unpatchable_enter
	.type	unpatchable_enter, @function
unpatchable_enter:
	.cfi_startproc
	pushq	%rbx				/* offset 0, 1 byte */
	.cfi_def_cfa_offset 16
	leaq	unpatchable_enter(%rip), %rdi	/* offset 1, 7 bytes */
	movq	8(%rsp), %rsi			/* offset 8, 5 bytes: the return address */
	nop					/* offsets 13 and 14 */
	nop
	.globl	unpatchable_enter_enter_call
unpatchable_enter_enter_call:
	call	*__cyg_profile_func_enter@GOTPCREL(%rip)	/* offset 15, 6 bytes */
	leaq	unpatchable_enter(%rip), %rdi
	movq	8(%rsp), %rsi
	.p2align 4
	.globl	unpatchable_enter_exit_call
unpatchable_enter_exit_call:
	call	__cyg_profile_func_exit@PLT	/* the first bytes of a block */
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	unpatchable_enter, .-unpatchable_enter

	.p2align 4
	.globl	redirected_enter
	.type	redirected_enter, @function
redirected_enter:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	leaq	redirected_enter(%rip), %rdi
	movq	8(%rsp), %rsi
	nop
	nop
	.globl	redirected_enter_enter_call
redirected_enter_enter_call:
	call	__cyg_profile_func_enter@PLT	/* offset 15, 5 bytes: e8 rel32 */
	leaq	redirected_enter(%rip), %rdi
	movq	8(%rsp), %rsi
	.p2align 4
	.globl	redirected_enter_exit_call
redirected_enter_exit_call:
	call	__cyg_profile_func_exit@PLT
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	redirected_enter, .-redirected_enter
	.section .note.GNU-stack,"",@progbits
