/* container(which): two "inlined" functions, inlined_a (which == 0) and
 * inlined_b (which == 1), each with its own enter hook call, sharing one
 * exit hook call whose argument comes from %rbx on both paths, as g++ -O2
 * -finstrument-functions laid out SQLite's freeP4 (sqlite3KeyInfoUnref and
 * freeEphemeralFunction inlined). Excluding inlined_a must not patch out
 * the shared exit call, or inlined_b's exits disappear with it. The
 * container itself calls no hook of its own. */
	.text
	.p2align 4
	.globl	inlined_a
	.type	inlined_a, @function
inlined_a:
	ret
	.size	inlined_a, .-inlined_a
	.p2align 4
	.globl	inlined_b
	.type	inlined_b, @function
inlined_b:
	ret
	.size	inlined_b, .-inlined_b

	.p2align 4
	.globl	container
	.type	container, @function
container:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	cmpl	$1, %edi
	je	1f
	leaq	inlined_a(%rip), %rbx
	movq	%rbx, %rdi
	movq	8(%rsp), %rsi
	call	__cyg_profile_func_enter@PLT
	jmp	2f
1:	leaq	inlined_b(%rip), %rbx
	movq	%rbx, %rdi
	movq	8(%rsp), %rsi
	call	__cyg_profile_func_enter@PLT
2:	movq	%rbx, %rdi
	movq	8(%rsp), %rsi
	call	__cyg_profile_func_exit@PLT
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	container, .-container
	.section .note.GNU-stack,"",@progbits
