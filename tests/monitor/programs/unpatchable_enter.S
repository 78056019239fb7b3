/* unpatchable_enter(): a function as -finstrument-functions compiles one,
 * laid out so that its enter hook call starts on the last byte of a
 * 16-byte block, which no single atomic store can replace (sonde leaves
 * such a call calling the hook, counted as unpatchable), while its exit
 * hook call starts a block and can be patched out. The shop's request
 * handler Shop::product had this layout (enter call at 0x206cf). */
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
	call	__cyg_profile_func_enter@PLT	/* offset 15: across two 16-byte blocks */
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
	.section .note.GNU-stack,"",@progbits
