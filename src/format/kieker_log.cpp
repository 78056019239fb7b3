#include "format/kieker_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "format/byte_sink.hpp"
#include "format/compressed_input.hpp"
#include "format/kieker_bin.hpp"
#include "format/kieker_dat.hpp"
#include "format/log_reader.hpp"

namespace sonde::format {

namespace fs = std::filesystem;

namespace {

constexpr size_t kBufferFlush = 64 * 1024;  // Kieker's default bufferSize

std::string errno_text(int err) { return std::strerror(err); }

// kieker-<yyyyMMdd-HHmmssSSS>-UTC-<NNN><ext>, as RotatingLogFilePoolHandler
// names files, uncompressed.
std::string data_file_name(uint32_t counter, KiekerLogMode mode) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm utc{};
  gmtime_r(&now.tv_sec, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  char name[96];
  std::snprintf(name, sizeof name, "kieker-%s%03ld-UTC-%03u%s", stamp, now.tv_nsec / 1000000,
                counter, mode == KiekerLogMode::kDat ? ".dat" : ".bin");
  return name;
}

}  // namespace

KiekerLogWriter::KiekerLogWriter(std::string directory, KiekerLogMode mode,
                                 uint64_t max_entries_per_file)
    : KiekerLogWriter(std::move(directory), Options{mode, max_entries_per_file}) {}

KiekerLogWriter::KiekerLogWriter(std::string directory, const Options& options)
    : dir_(std::move(directory)),
      mode_(options.mode),
      max_entries_(std::max<uint64_t>(1, options.max_entries_per_file)),
      compression_(options.compression) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    fail("cannot create log directory " + dir_ + ": " + ec.message());
    return;
  }
  map_path_ = (fs::path(dir_) / "kieker.map").string();
  map_fd_ = ::open(map_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (map_fd_ < 0) fail("cannot create " + map_path_ + ": " + errno_text(errno));
}

KiekerLogWriter::~KiekerLogWriter() { close(); }

bool KiekerLogWriter::fail(std::string message) {
  if (!failed_) error_ = std::move(message);
  failed_ = true;
  return false;
}

bool KiekerLogWriter::drain(int fd, const std::string& path, std::string& buffer) {
  if (buffer.empty()) return true;
  int err = write_all(fd, buffer.data(), buffer.size());
  buffer.clear();
  if (err != 0) return fail("cannot write " + path + ": " + errno_text(err));
  return true;
}

bool KiekerLogWriter::drain_data(bool sync) {
  if (compressor_ == nullptr) return drain(data_fd_, data_path_, data_buf_);
  const bool ok = sync ? compressor_->flush(data_buf_) : compressor_->write(data_buf_);
  data_buf_.clear();
  if (!ok) return fail("cannot write " + data_path_ + ": " + compressor_->error());
  return true;
}

bool KiekerLogWriter::drain_all(bool sync) {
  if (failed_) return false;
  if (map_fd_ >= 0 && !drain(map_fd_, map_path_, map_buf_)) return false;
  if (data_fd_ >= 0 && !drain_data(sync)) return false;
  return true;
}

bool KiekerLogWriter::start_data_file() {
  if (!close_data_file()) return false;
  ++file_counter_;
  const std::string plain_name = data_file_name(file_counter_, mode_);
  data_path_ =
      (fs::path(dir_) / (plain_name + std::string(compression_extension(compression_)))).string();
  data_fd_ = ::open(data_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (data_fd_ < 0) return fail("cannot create " + data_path_ + ": " + errno_text(errno));
  if (compression_ != Compression::kNone) {
    // A zip entry is named like the file it would be uncompressed.
    compressor_ = std::make_unique<CompressedOutput>(data_fd_, compression_, plain_name);
  }
  entries_in_file_ = 0;
  bytes_in_file_ = 0;
  return true;
}

bool KiekerLogWriter::close_data_file() {
  if (data_fd_ < 0) return true;
  bool ok = drain_all(false);
  if (ok && compressor_ != nullptr && !compressor_->finish()) {
    ok = fail("cannot write " + data_path_ + ": " + compressor_->error());
  }
  compressor_.reset();
  if (::close(data_fd_) != 0 && ok)
    ok = fail("cannot close " + data_path_ + ": " + errno_text(errno));
  data_fd_ = -1;
  return ok;
}

bool KiekerLogWriter::write(const Record& r) {
  if (failed_) return false;
  if (closed_) {
    error_ = "writer for " + dir_ + " is closed";
    return false;
  }
  if (!values_match_schema(r)) {
    error_ = "record of type " + (r.schema ? r.schema->class_name : std::string("<none>")) +
             " does not match its schema; not written";
    return false;
  }
  const bool zip_full =
      compression_ == Compression::kZip && bytes_in_file_ >= CompressedOutput::kMaxZipEntryBytes;
  if (data_fd_ < 0 || entries_in_file_ >= max_entries_ || zip_full) {
    if (!start_data_file()) return false;
  }
  const size_t size_before = data_buf_.size();
  const int32_t known = registry_.size();
  const int32_t type_id = registry_.id(r.schema->class_name);
  if (mode_ == KiekerLogMode::kDat) {
    altered_ += kieker::encode_dat_line(r, type_id, data_buf_);
  } else {
    kieker::encode_bin_record(r, type_id, registry_, data_buf_);
  }
  for (int32_t id = known; id < registry_.size(); ++id) {
    kieker::append_map_line(map_buf_, id, registry_.value(id));
  }
  bytes_in_file_ += data_buf_.size() - size_before;
  ++entries_in_file_;
  ++records_;
  // Not a sync flush: that would cost compression on every buffer.
  if (data_buf_.size() >= kBufferFlush) return drain_all(false);
  return true;
}

bool KiekerLogWriter::flush() { return drain_all(true); }

bool KiekerLogWriter::close() {
  if (closed_) return !failed_;
  closed_ = true;
  close_data_file();
  if (map_fd_ >= 0) {
    if (::close(map_fd_) != 0) fail("cannot close " + map_path_ + ": " + errno_text(errno));
    map_fd_ = -1;
  }
  return !failed_;
}

// ---------------------------------------------------------------------------
// Reading

namespace {

enum class DataKind { kNone, kDat, kBin, kSniff, kCompressedMap };

// Only .dat and .bin are data, optionally behind a compression extension
// (.dat.gz, as older Kieker writers and sonde name them). A bare compression
// extension on a name without other dots (kieker-...-001.gz, as Kieker's
// current filters name their files) leaves the kind to the content; other
// compressed files (notes.txt.gz) are not data. Which compression it is, the
// content decides.
DataKind classify(std::string_view name) {
  const Compression c = compression_from_extension(name);
  name.remove_suffix(compression_extension(c).size());
  if (name.ends_with(".dat")) return DataKind::kDat;
  if (name.ends_with(".bin")) return DataKind::kBin;
  if (c == Compression::kNone) return DataKind::kNone;
  if (name.ends_with(".map")) return DataKind::kCompressedMap;
  if (name.find('.') != std::string_view::npos) return DataKind::kNone;
  return DataKind::kSniff;
}

// Holds back the text after the last newline decoded so far, so that a line
// cut by a truncated or corrupt compressed stream is dropped instead of
// parsed: a number cut short still parses. A line longer than kMaxHeld goes
// through to the decoder, which has its own overlong-line handling.
class CompleteLines {
 public:
  static constexpr size_t kMaxHeld = 1 << 20;

  explicit CompleteLines(kieker::DatStreamDecoder& dat) : dat_(dat) {}
  bool feed(std::string_view chunk) {
    const size_t newline = chunk.rfind('\n');
    if (newline == std::string_view::npos) {
      held_.append(chunk);
      return held_.size() <= kMaxHeld || release();
    }
    if (!release() || !dat_.feed(chunk.substr(0, newline + 1))) return false;
    held_.assign(chunk.substr(newline + 1));
    return true;
  }
  // Passes the held text on: the stream ended normally.
  bool release() {
    const bool go = held_.empty() || dat_.feed(held_);
    held_.clear();
    return go;
  }
  // Drops the held text; returns its size.
  size_t drop() {
    const size_t n = held_.size();
    held_.clear();
    return n;
  }

 private:
  kieker::DatStreamDecoder& dat_;
  std::string held_;
};

class KiekerDirectoryReader {
 public:
  KiekerDirectoryReader(RecordSink& sink, LogReadStats& stats) : sink_(sink), stats_(stats) {}

  // Returns false once the sink asked to stop.
  bool read_data_file(const std::string& path, DataKind kind) {
    kieker::FileReport report(path, stats_);
    kieker::DatStreamDecoder dat(registry_, pool_, sink_, report);
    kieker::BinStreamDecoder bin(registry_, sink_, report);
    CompleteLines lines(dat);
    bool go = true;
    auto fn = [&](std::string_view chunk) {
      // Text records start with '$', binary ones with a big-endian type id.
      if (kind == DataKind::kSniff) kind = chunk.front() == '$' ? DataKind::kDat : DataKind::kBin;
      go = kind == DataKind::kDat ? lines.feed(chunk) : bin.feed(chunk);
      return go;
    };
    DecompressReport r = read_decompressed(path, fn);
    // A file that could not be decoded at all was not read; one that failed
    // part way was, up to the failure.
    if (r.error.empty() || r.bytes > 0) stats_.files.push_back(path);
    if (!r.error.empty()) {
      stats_.ok = false;
      stats_.errors.push_back(r.error);
    }
    for (std::string& w : r.warnings) stats_.warnings.push_back(std::move(w));
    if (kind == DataKind::kBin) {
      bin.finish();  // reports a record cut short itself
      return go;
    }
    if (r.truncated || !r.error.empty()) {
      if (size_t cut = lines.drop(); cut > 0) {
        ++stats_.skipped;
        stats_.warnings.push_back(
            path + ": the last " + std::to_string(cut) +
            " bytes, an incomplete line where the data breaks off, were skipped");
      }
    } else if (go) {
      go = lines.release();
    }
    dat.finish();
    return go;
  }

  kieker::ReaderRegistry& registry() { return registry_; }

 private:
  RecordSink& sink_;
  LogReadStats& stats_;
  StringPool pool_;
  kieker::ReaderRegistry registry_{pool_};
};

}  // namespace

LogReadStats read_kieker_directory(const std::string& dir, RecordSink& sink) {
  LogReadStats stats;
  auto fatal = [&](std::string message) {
    stats.ok = false;
    stats.errors.push_back(std::move(message));
    return stats;
  };
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return fatal(dir + ": not a directory");
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) names.push_back(it->path().filename().string());
  }
  if (ec) return fatal("cannot list " + dir + ": " + ec.message());
  std::sort(names.begin(), names.end());

  KiekerDirectoryReader reader(sink, stats);
  bool has_map = false;
  for (const std::string& name : names) {
    if (!name.ends_with(".map")) continue;
    has_map = true;
    size_t before = stats.errors.size();
    kieker::read_map_file((fs::path(dir) / name).string(), reader.registry(), stats.errors);
    if (stats.errors.size() != before) stats.ok = false;
  }
  if (!has_map) return fatal(dir + ": no .map file, so this is not a Kieker log directory");

  for (const std::string& name : names) {
    DataKind kind = classify(name);
    if (kind == DataKind::kNone) continue;
    if (kind == DataKind::kCompressedMap) {
      // Kieker never compresses its map (TextMapFileHandler: "future feature").
      stats.warnings.push_back((fs::path(dir) / name).string() +
                               ": compressed map files are not read; file skipped");
      continue;
    }
    if (!reader.read_data_file((fs::path(dir) / name).string(), kind)) break;
  }
  return stats;
}

}  // namespace sonde::format
