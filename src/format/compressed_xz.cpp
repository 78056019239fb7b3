// xz decoding with liblzma.
#include <lzma.h>

#include <memory>

#include "format/compressed_stream.hpp"

namespace sonde::format::compressed {

namespace {

// liblzma returns codes only; these are the meanings its API documents.
std::string lzma_message(lzma_ret ret) {
  switch (ret) {
    case LZMA_MEM_ERROR:
      return "LZMA_MEM_ERROR: cannot allocate memory";
    case LZMA_MEMLIMIT_ERROR:
      return "LZMA_MEMLIMIT_ERROR: memory usage limit reached";
    case LZMA_FORMAT_ERROR:
      return "LZMA_FORMAT_ERROR: file format not recognized";
    case LZMA_OPTIONS_ERROR:
      return "LZMA_OPTIONS_ERROR: unsupported compression options";
    case LZMA_DATA_ERROR:
      return "LZMA_DATA_ERROR: compressed data is corrupt";
    case LZMA_PROG_ERROR:
      return "LZMA_PROG_ERROR: programming error";
    default:
      return "liblzma error " + std::to_string(static_cast<int>(ret));
  }
}

struct LzmaState {
  lzma_stream s = LZMA_STREAM_INIT;
  ~LzmaState() { lzma_end(&s); }
};

}  // namespace

StreamEnd decode_xz(InputFile& in, Output& out) {
  LzmaState st;
  // LZMA_CONCATENATED: read every stream of the file, as xz -d does.
  lzma_ret ret = lzma_stream_decoder(&st.s, UINT64_MAX, LZMA_CONCATENATED);
  if (ret != LZMA_OK) return {StreamEnd::kCorrupt, lzma_message(ret)};
  std::unique_ptr<uint8_t[]> obuf(new uint8_t[kOutputBlock]);
  bool pending = false;  // the output buffer was filled: more output may wait
  for (;;) {
    if (in.buffered().empty() && !pending) in.refill();
    if (!in.read_error().empty()) return {StreamEnd::kReadError, in.read_error()};
    const std::string_view avail = in.buffered();
    // With LZMA_CONCATENATED only LZMA_FINISH tells the decoder no stream follows.
    const lzma_action action = avail.empty() && in.at_end() ? LZMA_FINISH : LZMA_RUN;
    st.s.next_in = reinterpret_cast<const uint8_t*>(avail.data());
    st.s.avail_in = avail.size();
    st.s.next_out = obuf.get();
    st.s.avail_out = kOutputBlock;
    ret = lzma_code(&st.s, action);
    in.consume(avail.size() - st.s.avail_in);
    const size_t produced = kOutputBlock - st.s.avail_out;
    pending = st.s.avail_out == 0;
    if (!out.emit(std::string_view(reinterpret_cast<const char*>(obuf.get()), produced))) {
      return {StreamEnd::kStopped, ""};
    }
    if (ret == LZMA_STREAM_END) return {};
    if (ret == LZMA_OK) continue;
    // No progress possible: at the end of the file that means it was cut.
    if (ret == LZMA_BUF_ERROR && action == LZMA_FINISH) return {StreamEnd::kTruncated, ""};
    if (ret == LZMA_BUF_ERROR) continue;
    return {StreamEnd::kCorrupt, lzma_message(ret)};
  }
}

}  // namespace sonde::format::compressed
