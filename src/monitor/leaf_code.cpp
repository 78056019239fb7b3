#include "monitor/leaf_code.hpp"

#include <capstone/capstone.h>

namespace sonde::monitor {
namespace {

// A `rep`/`repne` string instruction (movs, stos, lods, scas, cmps, ins,
// outs) repeats rcx times: a loop in one instruction. Read from the bytes,
// because Capstone reports SSE's mandatory f2/f3 prefixes (movsd, movss)
// as rep prefixes too.
bool is_rep_string(const cs_insn& insn) {
  bool rep = false;
  for (uint16_t i = 0; i < insn.size; ++i) {
    const uint8_t b = insn.bytes[i];
    if (b == 0xf2 || b == 0xf3) {
      rep = true;
    } else if (b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 ||
               b == 0x65 || b == 0x66 || b == 0x67 || (b >= 0x40 && b <= 0x4f)) {
      continue;  // other prefixes, REX
    } else {
      return rep &&
             ((b >= 0xa4 && b <= 0xa7) || (b >= 0xaa && b <= 0xaf) || (b >= 0x6c && b <= 0x6f));
    }
  }
  return false;
}

bool leaves_the_program(unsigned id) {
  return id == X86_INS_SYSCALL || id == X86_INS_SYSENTER || id == X86_INS_INT ||
         id == X86_INS_INT1 || id == X86_INS_INT3 || id == X86_INS_INTO || id == X86_INS_HLT;
}

// The single operand of a call or jump, as a target or a rip-relative slot.
struct Operand {
  enum Kind { kTarget, kSlot, kOther } kind = kOther;
  uint64_t value = 0;
};

Operand branch_operand(const cs_insn& insn) {
  const cs_x86& x = insn.detail->x86;
  if (x.op_count != 1) return {};
  const cs_x86_op& op = x.operands[0];
  if (op.type == X86_OP_IMM) return {Operand::kTarget, static_cast<uint64_t>(op.imm)};
  if (op.type == X86_OP_MEM && op.mem.base == X86_REG_RIP && op.mem.index == X86_REG_INVALID &&
      op.mem.segment == X86_REG_INVALID) {
    return {Operand::kSlot, insn.address + insn.size + static_cast<uint64_t>(op.mem.disp)};
  }
  return {};
}

}  // namespace

LeafVerdict classify_leaf(const uint8_t* code, size_t size, uint64_t address,
                          uint32_t max_instructions, const ReachesHook& reaches_hook) {
  LeafVerdict v;
  if (size == 0) {
    v.reason = "no size";
    return v;
  }
  csh handle = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
    v.reason = "no disassembler";
    return v;
  }
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = cs_malloc(handle);
  const uint8_t* at = code;
  size_t left = size;
  uint64_t pc = address;
  const uint64_t end = address + size;
  const char* fail = nullptr;
  while (fail == nullptr && insn != nullptr && left > 0) {
    if (!cs_disasm_iter(handle, &at, &left, &pc, insn)) {
      fail = "undecodable bytes";
      break;
    }
    if (++v.instructions > max_instructions) {
      fail = "too many instructions";
    } else if (leaves_the_program(insn->id)) {
      fail = "system call or trap";
    } else if (is_rep_string(*insn)) {
      fail = "rep string instruction";
    } else if (insn->id == X86_INS_LOOP || insn->id == X86_INS_LOOPE ||
               insn->id == X86_INS_LOOPNE) {
      // Capstone 4 puts these in no jump group (only "branch relative").
      fail = "loop instruction";
    } else if (cs_insn_group(handle, insn, CS_GRP_CALL)) {
      const Operand op = branch_operand(*insn);
      if (op.kind == Operand::kOther || !reaches_hook(op.value, op.kind == Operand::kSlot)) {
        fail = "calls a function";
      }
    } else if (cs_insn_group(handle, insn, CS_GRP_JUMP)) {
      const Operand op = branch_operand(*insn);
      const bool unconditional = insn->id == X86_INS_JMP;
      if (op.kind == Operand::kSlot) {
        if (!unconditional || !reaches_hook(op.value, true)) fail = "indirect jump";
      } else if (op.kind == Operand::kOther) {
        fail = "indirect jump";
      } else if (op.value >= address && op.value < end) {
        if (op.value <= insn->address) fail = "backward jump";
      } else if (!unconditional || !reaches_hook(op.value, false)) {
        // A jump out of the function is a tail call, unless it is the exit
        // hook's (tail_exits.hpp).
        fail = "jumps out of the function";
      }
    }
  }
  if (insn == nullptr && fail == nullptr) fail = "no memory";
  if (insn != nullptr) cs_free(insn, 1);
  cs_close(&handle);
  v.bounded = fail == nullptr;
  v.reason = fail != nullptr ? fail : "";
  return v;
}

}  // namespace sonde::monitor
