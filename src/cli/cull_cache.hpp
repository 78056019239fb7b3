// What `sonde run --cull` remembers between runs (docs/cull.md, "Across
// runs"): per build of an executable, the functions its runs culled. The
// next --cull run of the same build starts with them excluded (as a
// patterns file) and culls whatever else it finds: on a program that runs
// for a second or less, a run's own first phase costs more than culling
// saves, while functions excluded from the start have their hook calls
// patched before their first call.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sonde::cli {

// The file exec would run for `program`: itself if it names a path, else
// the first executable of that name on PATH.
std::optional<std::filesystem::path> resolve_executable(const std::string& program);

// What identifies a build of `exe`: "build-id-<hex>" from its GNU build-id
// note (elfutils), or, without one, "file-<hex>", a hash of its absolute
// path, size and modification time. Empty if the file cannot be read.
std::string executable_key(const std::filesystem::path& exe);

// $SONDE_CULL_CACHE, else $XDG_CACHE_HOME/sonde/cull, else
// $HOME/.cache/sonde/cull; empty if none is set.
std::filesystem::path cull_cache_dir();

// The exclusions (`-pattern` lines) of a patterns file: a cull report or a
// cache file. A missing file has none.
std::vector<std::string> excluded_patterns(const std::filesystem::path& file);

// Writes `exclusions` as the cache file for `program`, replacing it
// atomically. Returns "" or the error, naming the file.
std::string write_cull_cache(const std::filesystem::path& file,
                             const std::vector<std::string>& exclusions,
                             const std::string& program);

}  // namespace sonde::cli
