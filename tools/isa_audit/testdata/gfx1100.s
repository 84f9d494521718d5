; Two kernels for isa_audit's GFX11.0 operand check (tools/CMakeLists.txt, isa_audit_mad64_overlap): the first
; has a v_mad_u64_u32 whose destination v[2:3] overlaps its addend v[1:2], the second only disjoint ones.
	.text
	.globl	_Z7overlapPm
	.type	_Z7overlapPm,@function
_Z7overlapPm:                           ; @_Z7overlapPm
	global_load_b64 v[0:1], v0, s[0:1]
	v_mad_u64_u32 v[2:3], null, s4, s5, v[1:2]
	v_mad_i64_i32 v[6:7], null, v8, s5, v[4:5]
	s_endpgm
.Lfunc_end0:
	.globl	_Z8disjointPm
	.type	_Z8disjointPm,@function
_Z8disjointPm:                          ; @_Z8disjointPm
	global_load_b64 v[0:1], v0, s[0:1]
	v_mad_u64_u32 v[4:5], null, v2, s5, v[0:1]
	v_mad_u64_u32 v[2:3], null, s4, 48, 0
	s_endpgm
.Lfunc_end1:
