// gzip, zlib and raw deflate decoding with zlib's inflate.
#include <zlib.h>

#include <memory>

#include "format/compressed_stream.hpp"

namespace sonde::format::compressed {

namespace {

constexpr int kGzipWindow = 15 + 16;  // zlib's way of asking for the gzip wrapper
constexpr int kZlibWindow = 15;
constexpr int kRawWindow = -15;  // negative: no wrapper at all

struct InflateState {
  z_stream zs{};
  bool ready = false;
  ~InflateState() {
    if (ready) inflateEnd(&zs);
  }
};

StreamEnd corrupt(const z_stream& zs, int ret) {
  std::string why = zs.msg != nullptr ? zs.msg : zError(ret);
  if (ret == Z_NEED_DICT) why = "the stream needs a preset dictionary";
  return {StreamEnd::kCorrupt, why};
}

// After the end of a stream: is there more in the file?
StreamEnd complete(InputFile& in) {
  StreamEnd end;
  if (in.want(1)) {
    end.trailing_data = true;
    end.trailing_offset = in.offset();
  }
  return end;
}

// Inflates one stream (or, for gzip, every member) from `in` to `out`.
StreamEnd inflate_stream(InputFile& in, Output& out, int window_bits, uint32_t* crc) {
  InflateState st;
  int ret = inflateInit2(&st.zs, window_bits);
  if (ret != Z_OK) return corrupt(st.zs, ret);
  st.ready = true;
  std::unique_ptr<char[]> obuf(new char[kOutputBlock]);
  // inflate() filled the whole output buffer last time, so it may hold more
  // output without needing more input.
  bool pending = false;
  for (;;) {
    if (in.buffered().empty() && !pending && !in.refill()) {
      if (!in.read_error().empty()) return {StreamEnd::kReadError, in.read_error()};
      return {StreamEnd::kTruncated, ""};
    }
    const std::string_view avail = in.buffered();
    st.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(avail.data()));
    st.zs.avail_in = static_cast<uInt>(avail.size());
    st.zs.next_out = reinterpret_cast<Bytef*>(obuf.get());
    st.zs.avail_out = static_cast<uInt>(kOutputBlock);
    ret = inflate(&st.zs, Z_NO_FLUSH);
    in.consume(avail.size() - st.zs.avail_in);
    const size_t produced = kOutputBlock - st.zs.avail_out;
    pending = st.zs.avail_out == 0;
    if (crc != nullptr) {
      *crc = static_cast<uint32_t>(
          crc32(*crc, reinterpret_cast<const Bytef*>(obuf.get()), static_cast<uInt>(produced)));
    }
    if (!out.emit(std::string_view(obuf.get(), produced))) return {StreamEnd::kStopped, ""};
    if (ret == Z_OK || ret == Z_BUF_ERROR) continue;  // Z_BUF_ERROR: needs more input
    if (ret != Z_STREAM_END) return corrupt(st.zs, ret);
    if (window_bits == kRawWindow) return {};  // the zip reader parses what follows
    // gzip allows several members in one file (`cat a.gz b.gz`); gunzip reads them all.
    if (window_bits == kGzipWindow && in.want(2) && in.buffered().substr(0, 2) == "\x1f\x8b") {
      inflateReset(&st.zs);
      continue;
    }
    return complete(in);
  }
}

}  // namespace

StreamEnd decode_gzip(InputFile& in, Output& out) {
  return inflate_stream(in, out, kGzipWindow, nullptr);
}

StreamEnd decode_zlib(InputFile& in, Output& out) {
  return inflate_stream(in, out, kZlibWindow, nullptr);
}

StreamEnd decode_raw_deflate(InputFile& in, Output& out, uint32_t& crc) {
  return inflate_stream(in, out, kRawWindow, &crc);
}

}  // namespace sonde::format::compressed
