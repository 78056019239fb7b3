#include "format/kieker_tcp.hpp"

#include "format/kieker_bin.hpp"

namespace sonde::format::kieker {
namespace {

void put_i32(std::string& out, int32_t v) {
  auto u = static_cast<uint32_t>(v);
  const char b[4] = {static_cast<char>(u >> 24), static_cast<char>(u >> 16),
                     static_cast<char>(u >> 8), static_cast<char>(u)};
  out.append(b, 4);
}

int32_t get_i32(const char* p) {
  uint32_t u = 0;
  for (int i = 0; i < 4; ++i) u = (u << 8) | static_cast<unsigned char>(p[i]);
  return static_cast<int32_t>(u);
}

}  // namespace

void TcpEncoder::encode(const Record& r, std::string& out) {
  const int32_t known = registry_.size();
  record_.clear();
  encode_bin_record(r, registry_.id(r.schema->class_name), registry_, record_);
  for (int32_t id = known; id < registry_.size(); ++id) {
    std::string_view s = registry_.value(id);
    put_i32(out, kRegistryFrameTag);
    put_i32(out, id);
    put_i32(out, static_cast<int32_t>(s.size()));
    out.append(s);
  }
  out.append(record_);
}

void TcpDecoder::fail(uint64_t at, const std::string& reason) {
  error_ = peer_ + ": offset " + std::to_string(at) + ": " + reason;
}

bool TcpDecoder::feed(const void* data, size_t size, RecordSink& sink) {
  if (failed() || stopped_) return false;
  buf_.append(static_cast<const char*>(data), size);
  Step step = Step::kDone;
  while (pos_ < buf_.size() && (step = frame(sink)) == Step::kDone) {
  }
  base_offset_ += pos_;
  buf_.erase(0, pos_);
  pos_ = 0;
  return step != Step::kStop;
}

bool TcpDecoder::finish() {
  if (!failed() && !stopped_ && pending() > 0) {
    fail(offset(), "stream ends inside a frame (" + std::to_string(pending()) + " bytes)");
  }
  return !failed();
}

TcpDecoder::Step TcpDecoder::frame(RecordSink& sink) {
  const char* p = buf_.data() + pos_;
  const size_t n = buf_.size() - pos_;
  const uint64_t at = offset();
  if (n < 4) return Step::kNeedMore;
  const int32_t tag = get_i32(p);

  if (tag == kRegistryFrameTag) {
    if (n < 12) return Step::kNeedMore;
    const int32_t id = get_i32(p + 4);
    const int32_t length = get_i32(p + 8);
    if (id < 0) {
      fail(at, "registry frame with negative string id " + std::to_string(id));
      return Step::kStop;
    }
    if (length < 0) {
      fail(at, "registry frame with negative length " + std::to_string(length));
      return Step::kStop;
    }
    if (static_cast<size_t>(length) > kMaxTcpFrame) {
      fail(at, "registry frame of " + std::to_string(length) + " bytes exceeds the " +
                   std::to_string(kMaxTcpFrame) + "-byte limit");
      return Step::kStop;
    }
    if (n < 12 + static_cast<size_t>(length)) return Step::kNeedMore;
    registry_.set(id, std::string_view(p + 12, static_cast<size_t>(length)));
    pos_ += 12 + static_cast<size_t>(length);
    return Step::kDone;
  }

  size_t size = 0;
  switch (decode_bin_record(std::string_view(p, n), registry_, record_, &size, &detail_)) {
    case BinStatus::kOk:
      pos_ += size;
      ++records_;
      if (!sink.on_record(record_)) {
        stopped_ = true;
        return Step::kStop;
      }
      return Step::kDone;
    case BinStatus::kNeedMore:
      if (size > kMaxTcpFrame) {
        fail(at, "record frame of at least " + std::to_string(size) + " bytes exceeds the " +
                     std::to_string(kMaxTcpFrame) + "-byte limit");
        return Step::kStop;
      }
      return Step::kNeedMore;
    case BinStatus::kUnknownTypeId:
      fail(at, "record frame names class string id " + std::to_string(tag) +
                   ", which no registry frame has defined");
      return Step::kStop;
    case BinStatus::kUnknownClass:
      fail(at, "record type " + detail_ +
                   " has no built-in schema; record frames carry no length, so the stream "
                   "cannot continue");
      return Step::kStop;
    case BinStatus::kBadString:
    case BinStatus::kBadArray:
      fail(at, detail_);
      return Step::kStop;
  }
  return Step::kStop;
}

}  // namespace sonde::format::kieker
