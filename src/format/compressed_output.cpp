#include "format/compressed_output.hpp"

#include <cstring>

#include "format/byte_sink.hpp"
#include "format/compressed_encoder.hpp"

namespace sonde::format {

CompressedOutput::CompressedOutput(int fd, Compression compression, std::string entry_name)
    : fd_(fd),
      encoder_(compression == Compression::kZip
                   ? compressed::make_zip_encoder(std::move(entry_name))
                   : compressed::make_stream_encoder(compression)) {}

CompressedOutput::~CompressedOutput() = default;

bool CompressedOutput::write(std::string_view data) { return step(data, Step::kRun); }

bool CompressedOutput::flush(std::string_view data) { return step(data, Step::kFlush); }

bool CompressedOutput::finish(std::string_view data) {
  const bool ok = step(data, Step::kFinish);
  finished_ = true;
  return ok;
}

bool CompressedOutput::step(std::string_view data, Step how) {
  if (!error_.empty()) return false;
  if (finished_) {
    error_ = "stream already finished";
    return false;
  }
  std::string_view bytes = data;
  if (encoder_ != nullptr) {
    // Compressors treat "run with no input" as misuse; nothing to do anyway.
    if (how == Step::kRun && data.empty()) return true;
    using Mode = compressed::Encoder::Mode;
    const Mode mode = how == Step::kRun     ? Mode::kRun
                      : how == Step::kFlush ? Mode::kFlush
                                            : Mode::kFinish;
    out_.clear();
    error_ = encoder_->encode(data, mode, out_);
    if (!error_.empty()) return false;
    bytes = out_;
  }
  if (bytes.empty()) return true;
  if (int err = write_all(fd_, bytes.data(), bytes.size()); err != 0) {
    error_ = std::strerror(err);
    return false;
  }
  return true;
}

}  // namespace sonde::format
