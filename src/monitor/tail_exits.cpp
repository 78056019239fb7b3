#include "monitor/tail_exits.hpp"

#include <capstone/capstone.h>

#include <cstring>

namespace sonde::monitor {

std::vector<TailJump> find_tail_jumps(const uint8_t* code, size_t size, uint64_t address) {
  std::vector<TailJump> jumps;
  csh handle = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return jumps;
  cs_insn* insn = cs_malloc(handle);
  const uint8_t* at = code;
  size_t left = size;
  uint64_t pc = address;
  while (insn != nullptr && left > 0 && cs_disasm_iter(handle, &at, &left, &pc, insn)) {
    const uint8_t* b = insn->bytes;
    int32_t disp = 0;
    if (insn->size == 5 && b[0] == 0xe9) {
      std::memcpy(&disp, b + 1, 4);
      jumps.push_back({insn->address, 5, false, insn->address + 5 + static_cast<int64_t>(disp)});
    } else if (insn->size == 6 && b[0] == 0xff && b[1] == 0x25) {
      std::memcpy(&disp, b + 2, 4);
      jumps.push_back({insn->address, 6, true, insn->address + 6 + static_cast<int64_t>(disp)});
    }
  }
  if (insn != nullptr) cs_free(insn, 1);
  cs_close(&handle);
  return jumps;
}

}  // namespace sonde::monitor
