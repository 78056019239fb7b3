// sonde's native stream into the collector, driven by hand over loopback:
// a stream sent again on a second connection (as a sender that lost its
// confirmations resends it) is recognised by its stream id and not stored
// twice; the collector confirms the chunks it stored; a stream that breaks
// its format after the magic is closed with an error naming the offset.
#include <gtest/gtest.h>
#include <poll.h>

#include "../format/format_test_support.hpp"
#include "collector_test_support.hpp"
#include "format/log_reader.hpp"
#include "format/native_writer.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;

// A native stream as the monitor's tcp writer sends it: header, preamble
// chunk (stream id, first chunk 1), then `chunks` data chunks of `traces`
// one-call traces each.
std::string native_stream(const std::string& stream_id, int chunks, int traces) {
  format::StringSink sink;
  format::NativeWriter w(sink, {format::native::Codec::kZstd, 1, 1u << 20, false, false});
  w.meta("stream.id", stream_id);
  w.meta("stream.first_chunk", "1");
  w.flush(true);
  w.meta("host", "native-host");
  w.clock(0, 1'700'000'000'000'000'000, 1.0);
  w.thread(0, 4242, "main");
  w.operation(0, "shop.order", format::native::OperationKind::kManual, "shop", 0, "", 0);
  uint64_t t = 1000, trace = 1;
  for (int c = 0; c < chunks; ++c) {
    w.begin_events(0, t);
    for (int i = 0; i < traces; ++i) {
      w.trace_begin(t, trace++, -1, -1);
      w.enter(t + 1, 0);
      w.exit(t + 2, 0);
      t += 10;
    }
    w.end_events();
    w.flush(true);
  }
  return format::NativeWriter::file_header() + sink.bytes;
}

// Reads the collector's confirmations until the connection closes.
uint64_t last_confirmation(int fd) {
  uint64_t last = 0;
  std::string in;
  char buf[256];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) break;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
    while (in.size() >= 8) {
      last = 0;
      for (int i = 7; i >= 0; --i) last = last << 8 | static_cast<uint8_t>(in[i]);
      in.erase(0, 8);
    }
  }
  return last;
}

// Sends `bytes` on a new connection, closes the sending side and returns
// the last count the collector confirmed.
uint64_t send_stream(uint16_t port, const std::string& bytes) {
  const int fd = connect_to(port);
  EXPECT_TRUE(send_all(fd, bytes));
  ::shutdown(fd, SHUT_WR);
  const uint64_t confirmed = last_confirmation(fd);
  ::close(fd);
  return confirmed;
}

TEST(CollectorNative, AResentStreamIsConfirmedAndStoredOnce) {
  TempDir dir("sonde-collect-native");
  RunningCollector running(dir.path(), 2);
  ASSERT_EQ(running.open_error(), "");
  const int chunks = 3, traces = 50;
  const std::string stream = native_stream("host/1/1", chunks, traces);
  // Preamble + 3 data chunks, all stored and confirmed, both times.
  EXPECT_EQ(send_stream(running.port(), stream), uint64_t{chunks} + 1);
  EXPECT_EQ(send_stream(running.port(), stream), uint64_t{chunks} + 1);
  ASSERT_EQ(running.join(), "");

  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), 2u);
  // Per trace: TraceMetadata, before, after; one KiekerMetadataRecord.
  const uint64_t records = uint64_t{chunks} * traces * 3 + 1;
  EXPECT_EQ(clients[0].protocol, "native");
  EXPECT_EQ(clients[0].record.received, records);
  EXPECT_EQ(clients[0].traces, uint64_t{chunks} * traces);
  EXPECT_EQ(clients[0].duplicate_chunks, 0u);
  EXPECT_EQ(clients[1].protocol, "native");
  EXPECT_EQ(clients[1].duplicate_chunks, uint64_t{chunks});
  EXPECT_EQ(clients[1].traces, 0u);
  EXPECT_EQ(clients[1].record.error, "");

  auto store = open_store(dir.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->info().traces, uint64_t{chunks} * traces);
  Encoder count;
  EXPECT_TRUE(format::read_log(dir / "log", count).ok);
  EXPECT_EQ(count.records, records + 1);  // the second client's metadata record only
}

TEST(CollectorNative, ABrokenStreamIsClosedWithItsOffsetAndTheRestServed) {
  TempDir dir("sonde-collect-native-bad");
  RunningCollector running(dir.path(), 2);
  ASSERT_EQ(running.open_error(), "");
  std::string bad = native_stream("host/2/2", 1, 10);
  const size_t header = format::native::kFileHeaderSize;
  bad[header] ^= 0x55;  // the first chunk's magic
  send_stream(running.port(), bad);
  const std::string good = native_stream("host/3/3", 2, 10);
  EXPECT_EQ(send_stream(running.port(), good), 3u);
  ASSERT_EQ(running.join(), "");

  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_NE(clients[0].record.error.find("offset 16: bad chunk magic"), std::string::npos)
      << clients[0].record.error;
  EXPECT_EQ(clients[0].record.received, 0u);
  EXPECT_EQ(clients[0].record.undecoded_bytes, bad.size() - header);
  EXPECT_EQ(clients[1].record.error, "");
  EXPECT_EQ(clients[1].traces, 20u);
}

}  // namespace
}  // namespace sonde::collect
