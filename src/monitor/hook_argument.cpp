#include "monitor/hook_argument.hpp"

#include <capstone/capstone.h>

#include <algorithm>
#include <array>
#include <vector>

namespace sonde::monitor {
namespace {

constexpr int kRdi = 7;

// The 64-bit general-purpose register a register name is part of (0-15:
// rax rcx rdx rbx rsp rbp rsi rdi r8-r15), or -1.
int gpr(unsigned reg) {
  switch (reg) {
    case X86_REG_RAX:
    case X86_REG_EAX:
    case X86_REG_AX:
    case X86_REG_AH:
    case X86_REG_AL:
      return 0;
    case X86_REG_RCX:
    case X86_REG_ECX:
    case X86_REG_CX:
    case X86_REG_CH:
    case X86_REG_CL:
      return 1;
    case X86_REG_RDX:
    case X86_REG_EDX:
    case X86_REG_DX:
    case X86_REG_DH:
    case X86_REG_DL:
      return 2;
    case X86_REG_RBX:
    case X86_REG_EBX:
    case X86_REG_BX:
    case X86_REG_BH:
    case X86_REG_BL:
      return 3;
    case X86_REG_RSP:
    case X86_REG_ESP:
    case X86_REG_SP:
    case X86_REG_SPL:
      return 4;
    case X86_REG_RBP:
    case X86_REG_EBP:
    case X86_REG_BP:
    case X86_REG_BPL:
      return 5;
    case X86_REG_RSI:
    case X86_REG_ESI:
    case X86_REG_SI:
    case X86_REG_SIL:
      return 6;
    case X86_REG_RDI:
    case X86_REG_EDI:
    case X86_REG_DI:
    case X86_REG_DIL:
      return 7;
    case X86_REG_R8:
    case X86_REG_R8D:
    case X86_REG_R8W:
    case X86_REG_R8B:
      return 8;
    case X86_REG_R9:
    case X86_REG_R9D:
    case X86_REG_R9W:
    case X86_REG_R9B:
      return 9;
    case X86_REG_R10:
    case X86_REG_R10D:
    case X86_REG_R10W:
    case X86_REG_R10B:
      return 10;
    case X86_REG_R11:
    case X86_REG_R11D:
    case X86_REG_R11W:
    case X86_REG_R11B:
      return 11;
    case X86_REG_R12:
    case X86_REG_R12D:
    case X86_REG_R12W:
    case X86_REG_R12B:
      return 12;
    case X86_REG_R13:
    case X86_REG_R13D:
    case X86_REG_R13W:
    case X86_REG_R13B:
      return 13;
    case X86_REG_R14:
    case X86_REG_R14D:
    case X86_REG_R14W:
    case X86_REG_R14B:
      return 14;
    case X86_REG_R15:
    case X86_REG_R15D:
    case X86_REG_R15W:
    case X86_REG_R15B:
      return 15;
    default:
      return -1;
  }
}

// Registers a call may change (System V): all but rbx, rsp, rbp, r12-r15.
constexpr uint16_t kCallerSaved = 0x0fc7;  // rax rcx rdx rsi rdi r8-r11

// What a register holds at a point of the code, as far as the sweep knows.
struct Value {
  enum Kind : uint8_t { kUnreached, kAddress, kUnknown } kind = kUnreached;
  uint64_t address = 0;
  bool operator==(const Value&) const = default;
};
using State = std::array<Value, 16>;

Value join(const Value& a, const Value& b) {
  if (a.kind == Value::kUnreached) return b;
  if (b.kind == Value::kUnreached || a == b) return a;
  return {Value::kUnknown, 0};
}

// Joins `from` into `into`; whether `into` changed.
bool join_into(State& into, const State& from) {
  bool changed = false;
  for (size_t r = 0; r < into.size(); ++r) {
    const Value v = join(into[r], from[r]);
    changed = changed || !(v == into[r]);
    into[r] = v;
  }
  return changed;
}

State all_unknown() {
  State s;
  s.fill({Value::kUnknown, 0});
  return s;
}

enum class Flow : uint8_t { kNext, kBranch, kJump, kIndirect, kStop };

struct Insn {
  uint64_t address = 0;
  uint16_t writes = 0;  // bit per register of gpr(); 0xffff: unknown
  bool call = false;
  bool padding = false;  // a NOP (alignment between functions' blocks)
  Flow flow = Flow::kNext;
  uint64_t target = 0;             // kBranch, kJump: the direct target
  int lea_to = -1;                 // lea disp(%rip),%reg64: the register ...
  uint64_t lea_target = 0;         // ... and the address it loads
  int mov_to = -1, mov_from = -1;  // mov %reg64,%reg64
};

void step(State& s, const Insn& in) {
  if (in.lea_to >= 0) {
    s[static_cast<size_t>(in.lea_to)] = {Value::kAddress, in.lea_target};
    return;
  }
  if (in.mov_to >= 0 && in.mov_from >= 0) {
    s[static_cast<size_t>(in.mov_to)] = s[static_cast<size_t>(in.mov_from)];
    return;
  }
  uint16_t killed = in.writes;
  if (in.call) killed |= kCallerSaved;
  for (size_t r = 0; r < s.size(); ++r) {
    if (killed & (1u << r)) s[r] = {Value::kUnknown, 0};
  }
}

}  // namespace

// The code as basic blocks with what each register holds where each block
// starts: a forward data-flow analysis over the function's own control
// flow (direct jumps and fall-through). Where the code jumps through a
// register (a jump table), its targets are unknown; every block start
// (every direct jump's target, and whatever follows a jump or a return)
// is taken to be one, and gets the states at those jumps joined in. A
// case that the previous one falls into starts at a statement, not
// between a hook call's argument set-up and the call, so the registers a
// hook call reads are set after it on every path. Blocks nothing known
// reaches (landing pads of exceptions, padding) start with the states at
// the calls, caller-saved registers unknown.
struct FunctionCode::Impl {
  std::vector<Insn> insns;
  std::vector<size_t> block_of;     // per instruction
  std::vector<size_t> block_first;  // per block: first instruction
  std::vector<State> block_in;
  bool indirect = false;
  State at_indirect;  // joined states at the jumps through registers
  // Joined states at the calls, caller-saved registers unknown: where an
  // exception thrown from a call lands (a landing pad, which no jump
  // reaches), the unwinder has restored the callee-saved registers as they
  // were at that call.
  State at_calls;

  size_t index_of(uint64_t at) const {
    auto it = std::lower_bound(insns.begin(), insns.end(), at,
                               [](const Insn& in, uint64_t a) { return in.address < a; });
    return it != insns.end() && it->address == at ? static_cast<size_t>(it - insns.begin())
                                                  : insns.size();
  }

  void analyse();
};

void FunctionCode::Impl::analyse() {
  const size_t n = insns.size();
  if (n == 0) return;
  std::vector<bool> leader(n, false);
  leader[0] = true;
  for (size_t i = 0; i < n; ++i) {
    const Insn& in = insns[i];
    if (in.flow == Flow::kBranch || in.flow == Flow::kJump) {
      if (size_t t = index_of(in.target); t < n) leader[t] = true;
    }
    if (in.flow != Flow::kNext && i + 1 < n) leader[i + 1] = true;
    if (in.flow == Flow::kIndirect) indirect = true;
  }
  block_of.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (leader[i]) block_first.push_back(i);
    block_of[i] = block_first.size() - 1;
  }
  const size_t blocks = block_first.size();
  block_in.assign(blocks, State{});
  std::vector<bool> has_pred(blocks, false);
  has_pred[0] = true;
  for (size_t i = 0; i < n; ++i) {
    const Insn& in = insns[i];
    const bool last = i + 1 == n || leader[i + 1];
    if (!last) continue;
    if ((in.flow == Flow::kNext || in.flow == Flow::kBranch) && i + 1 < n) {
      has_pred[block_of[i + 1]] = true;
    }
    if (in.flow == Flow::kBranch || in.flow == Flow::kJump) {
      if (size_t t = index_of(in.target); t < n) has_pred[block_of[t]] = true;
    }
  }
  // Alignment NOPs after a jump or a return are reached by nothing; they
  // fall into the next block, which must not get a landing pad's state.
  std::vector<bool> only_padding(blocks, true);
  for (size_t i = 0; i < n; ++i) {
    if (!insns[i].padding) only_padding[block_of[i]] = false;
  }
  block_in[0] = all_unknown();  // the caller's values
  at_indirect = State{};
  at_calls = State{};
  // Round-robin to the fixed point; each value can only go unreached ->
  // address -> unknown, so it ends.
  bool changed = true;
  for (int round = 0; changed && round < 1000; ++round) {
    changed = false;
    for (size_t b = 0; b < blocks; ++b) {
      State s = block_in[b];
      const size_t last = b + 1 < blocks ? block_first[b + 1] : n;
      for (size_t i = block_first[b]; i < last; ++i) {
        if (insns[i].call) {
          State landing = s;
          for (size_t r = 0; r < landing.size(); ++r) {
            if (kCallerSaved & (1u << r)) landing[r] = {Value::kUnknown, 0};
          }
          if (join_into(at_calls, landing)) changed = true;
        }
        step(s, insns[i]);
      }
      const Insn& end_insn = insns[last - 1];
      auto flow_to = [&](size_t t) {
        if (t < n && join_into(block_in[block_of[t]], s)) changed = true;
      };
      if ((end_insn.flow == Flow::kNext || end_insn.flow == Flow::kBranch) && last < n)
        flow_to(last);
      if (end_insn.flow == Flow::kBranch || end_insn.flow == Flow::kJump) {
        flow_to(index_of(end_insn.target));
      }
      if (end_insn.flow == Flow::kIndirect && join_into(at_indirect, s)) changed = true;
    }
    for (size_t b = 1; b < blocks; ++b) {
      if (indirect && join_into(block_in[b], at_indirect)) changed = true;
      if (!has_pred[b] && !only_padding[b] && join_into(block_in[b], at_calls)) changed = true;
    }
  }
}

FunctionCode::FunctionCode(const uint8_t* code, size_t size, uint64_t address,
                           const ConstantSlot& read_slot)
    : impl_(std::make_unique<Impl>()) {
  csh handle = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return;
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = cs_malloc(handle);
  const uint8_t* at = code;
  size_t left = size;
  uint64_t pc = address;
  while (insn != nullptr && left > 0 && cs_disasm_iter(handle, &at, &left, &pc, insn)) {
    Insn in;
    in.address = insn->address;
    cs_regs read{}, written{};
    uint8_t n_read = 0, n_written = 0;
    if (cs_regs_access(handle, insn, read, &n_read, written, &n_written) == CS_ERR_OK) {
      for (uint8_t k = 0; k < n_written; ++k) {
        if (int r = gpr(written[k]); r >= 0) in.writes |= static_cast<uint16_t>(1u << r);
      }
    } else {
      in.writes = 0xffff;
    }
    const cs_x86& x = insn->detail->x86;
    const bool direct = x.op_count == 1 && x.operands[0].type == X86_OP_IMM;
    in.call = cs_insn_group(handle, insn, CS_GRP_CALL);
    in.padding = insn->id == X86_INS_NOP ||
                 (insn->id == X86_INS_XCHG && x.op_count == 2 && x.operands[0].type == X86_OP_REG &&
                  x.operands[1].type == X86_OP_REG && x.operands[0].reg == x.operands[1].reg);
    if (insn->id == X86_INS_RET || insn->id == X86_INS_UD2 || insn->id == X86_INS_HLT ||
        insn->id == X86_INS_INT3) {
      in.flow = Flow::kStop;
    } else if (cs_insn_group(handle, insn, CS_GRP_JUMP) || insn->id == X86_INS_LOOP ||
               insn->id == X86_INS_LOOPE || insn->id == X86_INS_LOOPNE) {
      const bool unconditional = insn->id == X86_INS_JMP;
      if (direct) {
        in.target = static_cast<uint64_t>(x.operands[0].imm);
        const bool inside = in.target >= address && in.target < address + size;
        // A jump out of the function is a tail call: nothing follows here.
        in.flow = unconditional ? (inside ? Flow::kJump : Flow::kStop)
                                : (inside ? Flow::kBranch : Flow::kNext);
      } else if (unconditional && x.op_count == 1 && x.operands[0].type == X86_OP_MEM &&
                 x.operands[0].mem.base == X86_REG_RIP) {
        in.flow = Flow::kStop;  // jmp *slot(%rip): a tail call through the GOT
      } else {
        in.flow = Flow::kIndirect;
      }
    }
    if (insn->id == X86_INS_LEA && x.op_count == 2 && x.operands[0].type == X86_OP_REG &&
        x.operands[0].size == 8 && x.operands[1].type == X86_OP_MEM &&
        x.operands[1].mem.base == X86_REG_RIP && x.operands[1].mem.index == X86_REG_INVALID) {
      in.lea_to = gpr(x.operands[0].reg);
      in.lea_target = insn->address + insn->size + static_cast<uint64_t>(x.operands[1].mem.disp);
    } else if (insn->id == X86_INS_MOV && x.op_count == 2 && x.operands[0].type == X86_OP_REG &&
               x.operands[1].type == X86_OP_REG && x.operands[0].size == 8) {
      in.mov_to = gpr(x.operands[0].reg);
      in.mov_from = gpr(x.operands[1].reg);
    } else if (insn->id == X86_INS_MOV && x.op_count == 2 && x.operands[0].type == X86_OP_REG &&
               x.operands[0].size == 8 && x.operands[1].type == X86_OP_MEM &&
               x.operands[1].mem.base == X86_REG_RIP &&
               x.operands[1].mem.index == X86_REG_INVALID &&
               x.operands[1].mem.segment == X86_REG_INVALID && read_slot) {
      const uint64_t slot =
          insn->address + insn->size + static_cast<uint64_t>(x.operands[1].mem.disp);
      uint64_t value = 0;
      if (read_slot(slot, &value)) {  // as a lea of that value
        in.lea_to = gpr(x.operands[0].reg);
        in.lea_target = value;
      }
    }
    impl_->insns.push_back(in);
  }
  if (insn != nullptr) cs_free(insn, 1);
  cs_close(&handle);
  impl_->analyse();
}

FunctionCode::~FunctionCode() = default;

bool FunctionCode::passes(uint64_t at, uint64_t fn) const {
  const Impl& f = *impl_;
  const size_t call = f.index_of(at);
  if (call >= f.insns.size()) return false;
  const size_t b = f.block_of[call];
  State s = f.block_in[b];
  for (size_t i = f.block_first[b]; i < call; ++i) {
    step(s, f.insns[i]);
  }
  const Value& v = s[kRdi];
  return v.kind == Value::kAddress && v.address == fn;
}

}  // namespace sonde::monitor
