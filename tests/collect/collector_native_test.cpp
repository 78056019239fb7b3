// sonde's native stream into the collector, driven by hand over loopback:
// a stream sent again on a second connection (as a sender that lost its
// confirmations resends it) is recognised by its stream id and not stored
// twice; the collector confirms the chunks it stored; a stream that breaks
// its format after the magic is closed with an error naming the offset.
// A native client's log holds the sender's chunks byte for byte, and only
// chunks that passed every check.
#include <gtest/gtest.h>
#include <poll.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "../format/format_test_support.hpp"
#include "collector_test_support.hpp"
#include "format/log_reader.hpp"
#include "format/native_writer.hpp"

namespace sonde::collect {
namespace {

using format::test::TempDir;

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

// The chunks of a stream (after its 16-byte header), as sent.
std::vector<std::string> chunks_of(const std::string& stream) {
  std::vector<std::string> out;
  size_t at = format::native::kFileHeaderSize;
  while (at + format::native::kChunkHeaderSize <= stream.size()) {
    uint32_t stored = 0;
    std::memcpy(&stored, stream.data() + at + 12, 4);
    const size_t size = format::native::kChunkHeaderSize + stored;
    out.push_back(stream.substr(at, size));
    at += size;
  }
  return out;
}

TEST(CollectorNative, ChunksAreStoredByteForByte) {
  TempDir dir("sonde-collect-native-raw");
  RunningCollector running(dir.path(), 1);
  ASSERT_EQ(running.open_error(), "");
  const std::string stream = native_stream("host/4/4", 3, 40);
  EXPECT_EQ(send_stream(running.port(), stream), 4u);
  ASSERT_EQ(running.join(), "");

  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), 1u);
  // Not decoded and encoded again: the file is what was sent.
  EXPECT_EQ(file_bytes(dir / clients[0].record.log_file), stream);
  EXPECT_EQ(clients[0].record.stored, clients[0].record.received);
  EXPECT_EQ(clients[0].record.rejected, 0u);
  Encoder count;
  EXPECT_TRUE(format::read_log(dir / "log", count).ok);
  EXPECT_EQ(count.records, clients[0].record.received);
}

TEST(CollectorNative, AChunkFailingItsChecksIsNeitherStoredNorConfirmed) {
  TempDir dir("sonde-collect-native-crc");
  RunningCollector running(dir.path(), 1);
  ASSERT_EQ(running.open_error(), "");
  const std::string stream = native_stream("host/5/5", 3, 40);
  const std::vector<std::string> chunks = chunks_of(stream);
  ASSERT_EQ(chunks.size(), 4u);  // preamble + 3
  std::string bad = stream;
  const size_t second_data_chunk =
      format::native::kFileHeaderSize + chunks[0].size() + chunks[1].size();
  bad[second_data_chunk + format::native::kChunkHeaderSize + 5] ^= 0x40;  // its payload
  // The preamble and the first data chunk only.
  EXPECT_EQ(send_stream(running.port(), bad), 2u);
  ASSERT_EQ(running.join(), "");

  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), 1u);
  const store::ClientRecord& c = clients[0].record;
  EXPECT_NE(
      c.error.find("offset " + std::to_string(second_data_chunk) + ": chunk checksum mismatch"),
      std::string::npos)
      << c.error;
  EXPECT_EQ(c.undecoded_bytes, bad.size() - second_data_chunk);
  EXPECT_EQ(file_bytes(dir / c.log_file), stream.substr(0, second_data_chunk));
  // The first chunk's 40 traces of three records, and the metadata record.
  EXPECT_EQ(c.received, 40u * 3 + 1);
  EXPECT_EQ(c.stored, c.received);
}

TEST(CollectorNative, AChunkWithABadItemIsNotStoredAndItsRecordsReachNoTrace) {
  TempDir dir("sonde-collect-native-item");
  RunningCollector running(dir.path(), 1);
  ASSERT_EQ(running.open_error(), "");
  // The second data chunk, uncompressed, with an item of an unknown tag
  // after its events: the checksum holds, the events decode, the item not.
  format::StringSink sink;
  format::NativeWriter w(sink, {format::native::Codec::kNone, 1, 1u << 20, false, false});
  preamble(w, "host/6/6", "1");
  define_main_thread(w, 77);
  for (uint64_t trace = 1; trace <= 2; ++trace) {
    const uint64_t t = 1000 * trace;
    w.begin_events(0, t);
    w.trace_begin(t, trace, -1, -1);
    w.enter(t + 1, 0);
    w.exit(t + 2, 0);
    w.end_events();
    w.flush(true);
  }
  const std::vector<std::string> sent = chunks_of(format::NativeWriter::file_header() + sink.bytes);
  ASSERT_EQ(sent.size(), 3u);
  const std::string good = format::NativeWriter::file_header() + sent[0] + sent[1];
  const std::string& second = sent[2];  // trace 2's events, no definitions
  uint32_t items = 0;
  std::memcpy(&items, second.data() + 16, 4);
  std::string payload = second.substr(format::native::kChunkHeaderSize);
  payload.push_back(static_cast<char>(0x63));  // no such tag
  const std::string stream = good + format::NativeWriter::frame_chunk(payload, items + 1);
  EXPECT_EQ(send_stream(running.port(), stream), 2u);
  ASSERT_EQ(running.join(), "");

  const collect::ClientReport report = running.collector().clients().at(0);
  const store::ClientRecord& c = report.record;
  EXPECT_NE(c.error.find("unknown item tag 99"), std::string::npos) << c.error;
  EXPECT_NE(c.error.find("its first 3 records were counted as received only"), std::string::npos)
      << c.error;
  EXPECT_EQ(c.received - c.stored, 3u);
  // The reconstruction reads the log: trace 1 only, trace 2's records
  // were in the rejected chunk.
  EXPECT_EQ(report.traces, 1u);
  EXPECT_EQ(report.invalid_traces, 0u);
  EXPECT_EQ(file_bytes(dir / c.log_file), good);
}

TEST(CollectorNative, AResentChunkKeepsItsDefinitionsForTheChunksAfterIt) {
  TempDir dir("sonde-collect-native-defs");
  RunningCollector running(dir.path(), 2);
  ASSERT_EQ(running.open_error(), "");
  // One sender's chunks: 1 defines the first operation, 2 a second one,
  // 3 uses both. The first connection carries 1 and 2; its confirmation
  // of 2 is lost, so the second connection starts at 2 again.
  format::StringSink sink;
  format::NativeWriter w(sink, {format::native::Codec::kZstd, 1, 1u << 20, false, false});
  uint64_t t = 1000, trace = 1;
  auto traces = [&](std::vector<uint32_t> ops) {
    w.begin_events(0, t);
    for (int i = 0; i < 20; ++i) {
      w.trace_begin(t, trace++, -1, -1);
      for (uint32_t op : ops) {
        w.enter(t + 1, op);
        w.exit(t + 2, op);
      }
      t += 10;
    }
    w.end_events();
    w.flush(true);
  };
  preamble(w, "host/7/7", "1");
  define_main_thread(w, 88);
  traces({0});
  w.operation(1, "shop.pay", format::native::OperationKind::kManual, "shop", 0, "", 0);
  traces({1});
  traces({0, 1});
  const std::vector<std::string> sent = chunks_of(format::NativeWriter::file_header() + sink.bytes);
  ASSERT_EQ(sent.size(), 4u);
  // The second connection's preamble: what the sender let go of, chunk 1's
  // definitions (the same string ids: they are made in the same order).
  format::StringSink again;
  format::NativeWriter p(again, {format::native::Codec::kZstd, 1, 1u << 20, false, false});
  p.meta("stream.id", "host/7/7");
  p.meta("stream.first_chunk", "2");
  define_main_thread(p, 88);
  p.flush(true);
  const std::string header = format::NativeWriter::file_header();
  EXPECT_EQ(send_stream(running.port(), header + sent[0] + sent[1] + sent[2]), 3u);
  EXPECT_EQ(send_stream(running.port(), header + again.bytes + sent[2] + sent[3]), 3u);
  ASSERT_EQ(running.join(), "");

  const auto clients = running.collector().clients();
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_EQ(clients[1].duplicate_chunks, 1u);
  EXPECT_EQ(clients[0].traces + clients[1].traces, 60u);
  for (const auto& c : clients) EXPECT_EQ(c.record.error, "");
  // Both logs read whole: the second refers to chunk 2's operation.
  Encoder count;
  const format::LogReadStats read = format::read_log(dir / "log", count);
  EXPECT_TRUE(read.ok) << (read.errors.empty() ? "" : read.errors.front());
  EXPECT_EQ(count.records, clients[0].record.stored + clients[1].record.stored);
  EXPECT_EQ(clients[0].record.stored + clients[1].record.stored,
            clients[0].record.received + clients[1].record.received);
  // Every trace once: 20 of one call, 20 of one, 20 of two; two records
  // per call, one TraceMetadata per trace, one metadata record per log.
  EXPECT_EQ(count.records, 20u * 2 + 20u * 2 + 20u * 4 + 60u + 2);
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
