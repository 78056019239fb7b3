// A main() for the fuzz harnesses without libFuzzer: `scripts/test.sh` runs
// them in its g++ ASan+UBSan build (ctest labels as their layer), so every
// CI run feeds each reader its seeds, every input that once crashed
// (fuzz/regressions/), truncations of each and byte mutations of each,
// under the sanitizers, without building the suite a fourth time with
// clang. Coverage-guided fuzzing stays in scripts/fuzz.sh.
//
//   fuzz_replay_X [--kieker-seed DIR AS]... [INPUT]...
//
// INPUT: a file or a directory of files. --kieker-seed converts a Kieker
// fixture log with the format library into the harness's input layout
// (fuzz/replay_seeds.hpp): AS is kieker-dat, kieker-bin, native or
// kieker-tcp. The mutations are deterministic (a fixed-seed generator), so
// a failure reproduces; a crash aborts under the sanitizers, an escaped
// exception terminates. No input at all is an error: a test that fed
// nothing must not pass.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "replay_seeds.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

struct Replay {
  uint64_t rng = 0x9e3779b97f4a7c15u;
  uint64_t inputs = 0;

  uint64_t next() {  // xorshift64*
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717u;
  }

  void run(const std::string& bytes) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++inputs;
  }

  // Cut-short inputs: every length up to 16, then 48 evenly spaced ones
  // (a log cut by a crash or a full disk ends anywhere).
  void truncations(const std::string& seed) {
    for (size_t n = 0; n < seed.size() && n < 16; ++n) run(seed.substr(0, n));
    if (seed.size() <= 16) return;
    for (size_t k = 1; k < 48; ++k) run(seed.substr(0, 16 + (seed.size() - 16) * k / 48));
  }

  // 1-4 bytes replaced, each by a random value or one that readers treat
  // specially (length fields, separators, the map's '$').
  void mutations(const std::string& seed, int count) {
    static constexpr unsigned char kSpecial[] = {0x00, 0xff, 0x7f, 0x80, '\n', ';', '$', '{', '"'};
    if (seed.empty()) return;
    for (int m = 0; m < count; ++m) {
      std::string bytes = seed;
      const int changes = 1 + static_cast<int>(next() % 4);
      for (int c = 0; c < changes; ++c) {
        const size_t at = next() % bytes.size();
        const uint64_t pick = next();
        bytes[at] = static_cast<char>(pick % 2 == 0 ? kSpecial[(pick >> 8) % sizeof kSpecial]
                                                    : static_cast<unsigned char>(pick >> 16));
      }
      run(bytes);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  constexpr int kMutations = 1000;                         // per seed
  std::vector<std::pair<std::string, std::string>> seeds;  // name, bytes
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--kieker-seed" && i + 2 < argc) {
      const std::string dir = argv[++i];
      const std::string as = argv[++i];
      std::string error;
      std::string bytes = sonde::fuzz::seed_from_kieker(dir, as, &error);
      if (!error.empty()) {
        std::fprintf(stderr, "fuzz replay: no seed from %s as %s: %s\n", dir.c_str(), as.c_str(),
                     error.c_str());
        return 2;
      }
      seeds.emplace_back(dir + " as " + as, std::move(bytes));
    } else {
      std::vector<std::filesystem::path> files;
      std::error_code ec;
      if (std::filesystem::is_directory(arg, ec)) {
        for (const auto& e : std::filesystem::directory_iterator(arg))
          if (e.is_regular_file()) files.push_back(e.path());
        std::sort(files.begin(), files.end());  // the mutations depend on the order
      } else {
        files.emplace_back(arg);
      }
      try {
        for (const auto& f : files) seeds.emplace_back(f.string(), sonde::fuzz::slurp(f));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz replay: %s\n", e.what());
        return 2;
      }
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "fuzz replay: no input given\n");
    return 2;
  }
  Replay replay;
  for (const auto& [name, bytes] : seeds) {
    // Before running it: a crash's report then follows the seed's name.
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", name.c_str(), bytes.size());
    const uint64_t before = replay.inputs;
    replay.run(bytes);
    replay.truncations(bytes);
    replay.mutations(bytes, kMutations);
    std::fprintf(stderr, "  %llu inputs\n",
                 static_cast<unsigned long long>(replay.inputs - before));
  }
  // The harnesses' and the seeds' scratch directories (fuzz_input_file.hpp).
  std::error_code ec;
  const std::string pid = std::to_string(getpid());
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("sonde-fuzz-" + pid), ec);
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("sonde-replay-seed-" + pid),
                              ec);
  std::fprintf(stderr, "fuzz replay: %zu seeds, %llu inputs, no crash\n", seeds.size(),
               static_cast<unsigned long long>(replay.inputs));
  return 0;
}
