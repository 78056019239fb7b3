// Stream compressors: zlib (gzip, zlib, raw deflate), liblzma (xz), libbz2.
#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>

#include "format/compressed_encoder.hpp"

namespace sonde::format::compressed {

namespace {

constexpr size_t kOutStep = 64 * 1024;
// The libraries count input in 32-bit units; larger inputs go in slices.
constexpr size_t kMaxSlice = size_t{1} << 30;

// Makes room for `kOutStep` more bytes at the end of `out`; returns where they start.
char* grow(std::string& out, size_t& used) {
  used = out.size();
  out.resize(used + kOutStep);
  return out.data() + used;
}

class DeflateEncoder final : public Encoder {
 public:
  explicit DeflateEncoder(int window_bits) {
    // Level 6 and memLevel 8 are zlib's and java.util.zip's defaults.
    int ret =
        deflateInit2(&zs_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
    if (ret == Z_OK) {
      ready_ = true;
    } else {
      init_error_ = zError(ret);
    }
  }
  ~DeflateEncoder() override {
    if (ready_) deflateEnd(&zs_);
  }

  std::string encode(std::string_view in, Mode mode, std::string& out) override {
    if (!ready_) return "deflateInit2: " + init_error_;
    do {
      const std::string_view slice = in.substr(0, kMaxSlice);
      in.remove_prefix(slice.size());
      const bool last = in.empty();
      const int flush = !last || mode == Mode::kRun ? Z_NO_FLUSH
                        : mode == Mode::kFlush      ? Z_SYNC_FLUSH
                                                    : Z_FINISH;
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(slice.data()));
      zs_.avail_in = static_cast<uInt>(slice.size());
      int ret;
      do {
        size_t used = 0;
        zs_.next_out = reinterpret_cast<Bytef*>(grow(out, used));
        zs_.avail_out = static_cast<uInt>(kOutStep);
        ret = deflate(&zs_, flush);
        out.resize(used + kOutStep - zs_.avail_out);
        if (ret == Z_STREAM_ERROR) return zs_.msg != nullptr ? zs_.msg : zError(ret);
        // A full output buffer may mean more output is waiting.
      } while (zs_.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
    } while (!in.empty());
    return "";
  }

 private:
  z_stream zs_{};
  bool ready_ = false;
  std::string init_error_;
};

std::string lzma_error(lzma_ret ret) {
  switch (ret) {
    case LZMA_MEM_ERROR:
      return "LZMA_MEM_ERROR: cannot allocate memory";
    case LZMA_OPTIONS_ERROR:
      return "LZMA_OPTIONS_ERROR: unsupported options";
    case LZMA_UNSUPPORTED_CHECK:
      return "LZMA_UNSUPPORTED_CHECK: integrity check not supported";
    default:
      return "liblzma error " + std::to_string(static_cast<int>(ret));
  }
}

class XzEncoder final : public Encoder {
 public:
  // Preset 6 is xz's default (about 94 MiB while compressing, 9 MiB to
  // decompress); Kieker's filter uses 9, which needs 674 MiB.
  XzEncoder() { init_ = lzma_easy_encoder(&s_, 6, LZMA_CHECK_CRC64); }
  ~XzEncoder() override { lzma_end(&s_); }

  std::string encode(std::string_view in, Mode mode, std::string& out) override {
    if (init_ != LZMA_OK) return "lzma_easy_encoder: " + lzma_error(init_);
    const lzma_action action = mode == Mode::kRun     ? LZMA_RUN
                               : mode == Mode::kFlush ? LZMA_SYNC_FLUSH
                                                      : LZMA_FINISH;
    s_.next_in = reinterpret_cast<const uint8_t*>(in.data());
    s_.avail_in = in.size();
    for (;;) {
      size_t used = 0;
      s_.next_out = reinterpret_cast<uint8_t*>(grow(out, used));
      s_.avail_out = kOutStep;
      const lzma_ret ret = lzma_code(&s_, action);
      out.resize(used + kOutStep - s_.avail_out);
      // LZMA_STREAM_END also ends a sync flush.
      if (ret == LZMA_STREAM_END) return "";
      if (ret != LZMA_OK) return lzma_error(ret);
      if (action == LZMA_RUN && s_.avail_in == 0 && s_.avail_out != 0) return "";
    }
  }

 private:
  lzma_stream s_ = LZMA_STREAM_INIT;
  lzma_ret init_;
};

class Bzip2Encoder final : public Encoder {
 public:
  // Block size 9 (900 kB) is bzip2's default and the best compression.
  Bzip2Encoder() { init_ = BZ2_bzCompressInit(&s_, 9, 0, 0); }
  ~Bzip2Encoder() override {
    if (init_ == BZ_OK) BZ2_bzCompressEnd(&s_);
  }

  std::string encode(std::string_view in, Mode mode, std::string& out) override {
    if (init_ != BZ_OK) return "BZ2_bzCompressInit failed with code " + std::to_string(init_);
    do {
      const std::string_view slice = in.substr(0, kMaxSlice);
      in.remove_prefix(slice.size());
      const bool last = in.empty();
      // No kFlush: bzip2 blocks are not byte-aligned, and BZ_FLUSH keeps a
      // block's last bits back, so a flushed block still cannot be decoded;
      // it would only cost compression. A new stream per flush would decode,
      // but Kieker's reader reads only the first stream of a file.
      const int action = last && mode == Mode::kFinish ? BZ_FINISH : BZ_RUN;
      s_.next_in = const_cast<char*>(slice.data());
      s_.avail_in = static_cast<unsigned>(slice.size());
      for (;;) {
        size_t used = 0;
        s_.next_out = grow(out, used);
        s_.avail_out = static_cast<unsigned>(kOutStep);
        const int ret = BZ2_bzCompress(&s_, action);
        out.resize(used + kOutStep - s_.avail_out);
        if (ret < 0) return "BZ2_bzCompress failed with code " + std::to_string(ret);
        // BZ_FLUSH_OK / BZ_FINISH_OK: more output to come.
        if (action == BZ_RUN && s_.avail_in == 0) break;
        if (action == BZ_FINISH && ret == BZ_STREAM_END) break;
      }
    } while (!in.empty());
    return "";
  }

 private:
  bz_stream s_{};
  int init_;
};

}  // namespace

std::unique_ptr<Encoder> make_stream_encoder(Compression c) {
  switch (c) {
    case Compression::kGzip:
      return std::make_unique<DeflateEncoder>(15 + 16);  // +16: gzip wrapper
    case Compression::kZlib:
      return std::make_unique<DeflateEncoder>(15);
    case Compression::kXz:
      return std::make_unique<XzEncoder>();
    case Compression::kBzip2:
      return std::make_unique<Bzip2Encoder>();
    case Compression::kNone:
    case Compression::kZip:
      break;
  }
  return nullptr;
}

std::unique_ptr<Encoder> make_raw_deflate_encoder() {
  return std::make_unique<DeflateEncoder>(-15);  // negative: no wrapper
}

}  // namespace sonde::format::compressed
