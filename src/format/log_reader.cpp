#include "format/log_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "format/kieker_flow.hpp"
#include "format/native_expander.hpp"
#include "format/native_reader.hpp"
#include "format/openxtrace_reader.hpp"
#include "format/string_pool.hpp"

namespace sonde::format {
namespace fs = std::filesystem;

LogKind detect_log_kind(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".map") return LogKind::kKiekerDirectory;
    }
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".sonde") return LogKind::kNative;
    }
    return LogKind::kUnknown;
  }
  if (looks_like_native_file(path)) return LogKind::kNative;
  return looks_like_openxtrace(path) ? LogKind::kOpenXtrace : LogKind::kUnknown;
}

LogReadStats read_native_as_records(const std::string& path, RecordSink& sink, NameForm form) {
  LogReadStats stats;
  NativeExpander expander(sink, form);
  NativeReadResult r = read_native_file(path, expander);
  stats.files.push_back(path);
  stats.records = expander.delivered();
  stats.lost_reported = std::max(r.lost_reported, r.end_events_lost);
  if (!expander.snapshot_reason().empty())
    stats.snapshot_reasons.push_back(expander.snapshot_reason());
  if (!r.ok) {
    stats.ok = false;
    stats.errors.push_back(r.error);
  }
  if (r.truncated) {
    stats.warnings.push_back(path + ": file ends inside a chunk (" +
                             std::to_string(r.truncated_bytes) +
                             " bytes cut off, e.g. the program was killed); read up to the last "
                             "complete chunk");
  } else if (r.ok && !r.clean_end) {
    stats.warnings.push_back(path + ": log was not closed (no END item); it may be incomplete");
  }
  if (stats.lost_reported != 0) {
    stats.warnings.push_back(path + ": the monitor reported " +
                             std::to_string(stats.lost_reported) + " lost events");
  }
  return stats;
}

LogReadStats read_log(const std::string& path, RecordSink& sink, NameForm form) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    LogReadStats s;
    s.ok = false;
    s.errors.push_back(path + ": no such file or directory");
    return s;
  }
  switch (detect_log_kind(path)) {
    case LogKind::kKiekerDirectory:
      return read_kieker_directory(path, sink);
    case LogKind::kOpenXtrace:
      return read_openxtrace(path, sink);
    case LogKind::kNative: {
      if (!fs::is_directory(path, ec)) return read_native_as_records(path, sink, form);
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.path().extension() == ".sonde") files.push_back(entry.path().string());
      }
      std::sort(files.begin(), files.end());
      LogReadStats total;
      for (const std::string& f : files) {
        LogReadStats s = read_native_as_records(f, sink, form);
        total.ok = total.ok && s.ok;
        total.records += s.records;
        total.skipped += s.skipped;
        total.lost_reported += s.lost_reported;
        total.errors.insert(total.errors.end(), s.errors.begin(), s.errors.end());
        total.warnings.insert(total.warnings.end(), s.warnings.begin(), s.warnings.end());
        total.files.insert(total.files.end(), s.files.begin(), s.files.end());
        total.snapshot_reasons.insert(total.snapshot_reasons.end(), s.snapshot_reasons.begin(),
                                      s.snapshot_reasons.end());
      }
      return total;
    }
    case LogKind::kUnknown:
      break;
  }
  LogReadStats s;
  s.ok = false;
  s.errors.push_back(path +
                     ": not a sonde native log, a Kieker log directory (no kieker.map) or an "
                     "OPEN.xtrace JSON file");
  return s;
}

}  // namespace sonde::format
