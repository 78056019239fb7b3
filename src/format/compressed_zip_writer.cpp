// Writes a zip archive holding one deflated entry as a stream (PKWARE APPNOTE
// 4.3): the local header carries no sizes (flag bit 3), a data descriptor
// after the data does, then the central directory. This is the layout of
// java.util.zip.ZipOutputStream, which Kieker's ZipCompressionFilter uses.
//
// Not libarchive's zip writer: the Kieker writers flush their log every
// flush_interval_ms so that a program killed later leaves a log readable
// up to the last flush (Encoder::Mode::kFlush, a deflate sync flush inside
// the entry), and libarchive's writer has no way to flush an entry's
// deflate stream before the entry ends. (Nor its reader: docs/formats/
// kieker.md, "Why sonde's own zip code".)
#include <zlib.h>

#include <ctime>

#include "format/compressed_encoder.hpp"
#include "format/compressed_zip_format.hpp"

namespace sonde::format::compressed {

namespace {

constexpr uint16_t kVersion = 20;  // 2.0: deflate
constexpr uint16_t kMadeByUnix = 3 << 8 | kVersion;
constexpr uint32_t kUnixFileMode = 0100644;  // regular file, rw-r--r--

void put16(std::string& out, uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>(v >> 8 & 0xff);
}

void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

// MS-DOS date and time, in local time as zip tools expect.
void dos_date_time(uint16_t& date, uint16_t& time) {
  const std::time_t now = std::time(nullptr);
  std::tm t{};
  localtime_r(&now, &t);
  const int year = t.tm_year + 1900 < 1980 ? 1980 : t.tm_year + 1900;
  date = static_cast<uint16_t>((year - 1980) << 9 | (t.tm_mon + 1) << 5 | t.tm_mday);
  time = static_cast<uint16_t>(t.tm_hour << 11 | t.tm_min << 5 | t.tm_sec / 2);
}

class ZipEncoder final : public Encoder {
 public:
  explicit ZipEncoder(std::string entry_name)
      : name_(std::move(entry_name)), deflater_(make_raw_deflate_encoder()) {
    dos_date_time(date_, time_);
  }

  std::string encode(std::string_view in, Mode mode, std::string& out) override {
    if (!header_written_) {
      write_local_header(out);
      header_written_ = true;
    }
    // Not with empty input: crc32_z(crc, NULL, 0) returns the initial value, not `crc`.
    if (!in.empty()) {
      crc_ = static_cast<uint32_t>(
          crc32_z(crc_, reinterpret_cast<const Bytef*>(in.data()), in.size()));
    }
    uncompressed_ += in.size();
    const size_t before = out.size();
    std::string err = deflater_->encode(in, mode, out);
    compressed_ += out.size() - before;
    if (!err.empty() || mode != Mode::kFinish) return err;
    if (compressed_ > 0xffffffff || uncompressed_ > 0xffffffff) {
      return "zip entry " + name_ +
             " exceeds 4 GiB, which needs zip64 records this writer does not write";
    }
    const uint64_t central_offset = header_size() + compressed_ + kDescriptorSize;
    write_descriptor(out);
    const size_t central_start = out.size();
    write_central_header(out);
    write_end_record(out, out.size() - central_start, central_offset);
    return "";
  }

 private:
  static constexpr uint64_t kDescriptorSize = 16;

  uint64_t header_size() const { return 30 + name_.size(); }

  void write_local_header(std::string& out) const {
    put32(out, zip::kLocalHeader);
    put16(out, kVersion);
    put16(out, zip::kFlagDataDescriptor);
    put16(out, zip::kMethodDeflate);
    put16(out, time_);
    put16(out, date_);
    put32(out, 0);  // CRC-32 and sizes follow in the data descriptor
    put32(out, 0);
    put32(out, 0);
    put16(out, static_cast<uint32_t>(name_.size()));
    put16(out, 0);  // no extra field
    out += name_;
  }

  void write_descriptor(std::string& out) const {
    put32(out, zip::kDataDescriptor);
    put32(out, crc_);
    put32(out, static_cast<uint32_t>(compressed_));
    put32(out, static_cast<uint32_t>(uncompressed_));
  }

  void write_central_header(std::string& out) const {
    put32(out, zip::kCentralHeader);
    put16(out, kMadeByUnix);
    put16(out, kVersion);
    put16(out, zip::kFlagDataDescriptor);
    put16(out, zip::kMethodDeflate);
    put16(out, time_);
    put16(out, date_);
    put32(out, crc_);
    put32(out, static_cast<uint32_t>(compressed_));
    put32(out, static_cast<uint32_t>(uncompressed_));
    put16(out, static_cast<uint32_t>(name_.size()));
    put16(out, 0);  // extra field length
    put16(out, 0);  // comment length
    put16(out, 0);  // disk number
    put16(out, 0);  // internal attributes
    put32(out, kUnixFileMode << 16);
    put32(out, 0);  // offset of the local header
    out += name_;
  }

  static void write_end_record(std::string& out, uint64_t central_size, uint64_t central_offset) {
    put32(out, zip::kEndOfCentralDirectory);
    put16(out, 0);  // this disk
    put16(out, 0);  // disk with the central directory
    put16(out, 1);  // entries on this disk
    put16(out, 1);  // entries in total
    put32(out, static_cast<uint32_t>(central_size));
    put32(out, static_cast<uint32_t>(central_offset));
    put16(out, 0);  // comment length
  }

  std::string name_;
  std::unique_ptr<Encoder> deflater_;
  uint16_t date_ = 0;
  uint16_t time_ = 0;
  bool header_written_ = false;
  uint32_t crc_ = 0;
  uint64_t compressed_ = 0;
  uint64_t uncompressed_ = 0;
};

}  // namespace

std::unique_ptr<Encoder> make_zip_encoder(std::string entry_name) {
  return std::make_unique<ZipEncoder>(std::move(entry_name));
}

}  // namespace sonde::format::compressed
