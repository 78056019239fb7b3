// bzip2 decoding with libbz2.
#include <bzlib.h>

#include <memory>

#include "format/compressed_stream.hpp"

namespace sonde::format::compressed {

namespace {

// libbz2's low-level API returns codes only; these are their documented meanings.
std::string bzip2_message(int ret) {
  switch (ret) {
    case BZ_DATA_ERROR:
      return "BZ_DATA_ERROR: data integrity error (bad block CRC or invalid block)";
    case BZ_DATA_ERROR_MAGIC:
      return "BZ_DATA_ERROR_MAGIC: no bzip2 stream signature";
    case BZ_MEM_ERROR:
      return "BZ_MEM_ERROR: cannot allocate memory";
    case BZ_CONFIG_ERROR:
      return "BZ_CONFIG_ERROR: libbz2 was miscompiled";
    default:
      return "libbz2 error " + std::to_string(ret);
  }
}

struct Bzip2State {
  bz_stream s{};
  bool ready = false;
  int init() {
    int ret = BZ2_bzDecompressInit(&s, 0, 0);
    ready = ret == BZ_OK;
    return ret;
  }
  void end() {
    if (ready) BZ2_bzDecompressEnd(&s);
    ready = false;
  }
  ~Bzip2State() { end(); }
};

bool starts_bzip2_stream(std::string_view s) {
  return s.size() >= 4 && s.substr(0, 3) == "BZh" && s[3] >= '1' && s[3] <= '9';
}

}  // namespace

StreamEnd decode_bzip2(InputFile& in, Output& out) {
  Bzip2State st;
  int ret = st.init();
  if (ret != BZ_OK) return {StreamEnd::kCorrupt, bzip2_message(ret)};
  std::unique_ptr<char[]> obuf(new char[kOutputBlock]);
  bool pending = false;  // the output buffer was filled: more output may wait
  for (;;) {
    if (in.buffered().empty() && !pending && !in.refill()) {
      if (!in.read_error().empty()) return {StreamEnd::kReadError, in.read_error()};
      return {StreamEnd::kTruncated, ""};
    }
    const std::string_view avail = in.buffered();
    st.s.next_in = const_cast<char*>(avail.data());
    st.s.avail_in = static_cast<unsigned>(avail.size());
    st.s.next_out = obuf.get();
    st.s.avail_out = static_cast<unsigned>(kOutputBlock);
    ret = BZ2_bzDecompress(&st.s);
    in.consume(avail.size() - st.s.avail_in);
    const size_t produced = kOutputBlock - st.s.avail_out;
    pending = st.s.avail_out == 0;
    if (!out.emit(std::string_view(obuf.get(), produced))) return {StreamEnd::kStopped, ""};
    if (ret == BZ_OK) continue;
    if (ret != BZ_STREAM_END) return {StreamEnd::kCorrupt, bzip2_message(ret)};
    // Parallel compressors (pbzip2, lbzip2) write one stream per block; bzip2 -d reads them all.
    if (in.want(4) && starts_bzip2_stream(in.buffered())) {
      st.end();
      ret = st.init();
      if (ret != BZ_OK) return {StreamEnd::kCorrupt, bzip2_message(ret)};
      pending = false;
      continue;
    }
    StreamEnd end;
    if (in.want(1)) {
      end.trailing_data = true;
      end.trailing_offset = in.offset();
    }
    return end;
  }
}

}  // namespace sonde::format::compressed
