// The listener's memory of native streams (collect/stored_chunks.hpp): kept
// while a connection carries the stream, and for the most recently ended
// streams only.
#include "collect/stored_chunks.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sonde::collect {
namespace {

TEST(StoredChunks, OnlyTheLastEndedStreamsAreRememberedBeyondTheBound) {
  StoredChunks stored(2);
  for (int i = 0; i < 5; ++i) {
    const std::string id = "host/" + std::to_string(i);
    stored.attach(id);
    stored.highest_stored(id) = 10 + static_cast<uint64_t>(i);
    stored.detach(id);
  }
  EXPECT_EQ(stored.streams(), 2u);
  // The two that ended last still skip what they resend...
  stored.attach("host/4");
  EXPECT_EQ(stored.highest_stored("host/4"), 14u);
  // ...the oldest start again from nothing stored.
  stored.attach("host/0");
  EXPECT_EQ(stored.highest_stored("host/0"), 0u);
}

TEST(StoredChunks, AStreamWithAConnectionIsNeverForgotten) {
  StoredChunks stored(1);
  stored.attach("busy");
  stored.highest_stored("busy") = 7;
  for (int i = 0; i < 100; ++i) {
    const std::string id = "short/" + std::to_string(i);
    stored.attach(id);
    stored.detach(id);
  }
  EXPECT_EQ(stored.highest_stored("busy"), 7u);
  EXPECT_EQ(stored.streams(), 2u);  // busy and the last short one
}

TEST(StoredChunks, AStreamThatEndedAgainCountsFromItsLastEnd) {
  StoredChunks stored(2);
  stored.attach("again");
  stored.highest_stored("again") = 3;
  stored.detach("again");  // 1st end
  stored.attach("again");  // the sender reconnected
  stored.highest_stored("again") = 5;
  stored.detach("again");  // 2nd end
  stored.attach("x");
  stored.detach("x");
  // Three ends queued, bound 2: the oldest (again's first) falls out, but
  // it no longer stands for the stream, which ended again since.
  stored.attach("again");
  EXPECT_EQ(stored.highest_stored("again"), 5u);
}

TEST(StoredChunks, TwoConnectionsOfOneStreamKeepItUntilBothEnd) {
  StoredChunks stored(0);  // forget a stream as soon as it has no connection
  stored.attach("s");
  stored.attach("s");
  stored.highest_stored("s") = 9;
  stored.detach("s");
  EXPECT_EQ(stored.highest_stored("s"), 9u);
  stored.detach("s");
  EXPECT_EQ(stored.streams(), 0u);
  stored.detach("s");  // an extra detach changes nothing
  EXPECT_EQ(stored.streams(), 0u);
}

}  // namespace
}  // namespace sonde::collect
