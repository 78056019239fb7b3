// Writes a stream of records as a log: a native .sonde file or a Kieker
// directory (.dat or .bin). Used by `sonde convert` and by the TCP listener.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "format/compressed_format.hpp"
#include "format/native_writer.hpp"
#include "format/record.hpp"

namespace sonde::format {

enum class OutputFormat { kNative, kKiekerDat, kKiekerBin };

class RecordLogWriter : public RecordSink {
 public:
  // on_record returns false once the output failed (e.g. disk full); a
  // record the format cannot carry is counted as rejected instead.
  // Hands everything buffered to the operating system (a native log writes
  // its partial chunk), so that it survives this process being killed.
  // False once the output failed; finish() says why.
  virtual bool flush() = 0;
  // Native logs: bytes encoded but not yet handed to the operating system
  // (Kieker directories do not tell and report 0).
  virtual size_t buffered_bytes() const { return 0; }
  // Closes the log. Returns "" or the error that stopped writing.
  virtual std::string finish() = 0;
  uint64_t written() const { return written_; }
  uint64_t rejected() const { return rejected_; }
  // Strings changed to fit the format (.dat cannot carry ';', CR, LF).
  virtual uint64_t strings_altered() const { return 0; }

 protected:
  uint64_t written_ = 0;
  uint64_t rejected_ = 0;
};

// Opens the output; problems opening it are reported by finish() (and make
// on_record return false), so callers have one place to check.
// `compression` applies to Kieker data files (see KiekerLogWriter::Options),
// `native` to native logs (a smaller chunk target holds less memory per open
// log, which counts where many logs are open at once: the collector).
std::unique_ptr<RecordLogWriter> open_record_log(OutputFormat format, const std::string& path,
                                                 Compression compression = Compression::kNone,
                                                 NativeWriterOptions native = {});

}  // namespace sonde::format
