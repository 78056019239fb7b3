// The message bus over Redis lists (--redis HOST:PORT): a send is an RPUSH
// to "shop:queue:<destination>", each destination's consumer BLPOPs it.
// The queue's bound is kept as with in-process queues: a sender that
// finds the list over capacity waits until it is below (flow control).
#include <hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>

#include "shop.hpp"

namespace shop {
namespace {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
using Context = std::unique_ptr<redisContext, ContextFree>;
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

Context connect(const std::string& address) {
  const auto colon = address.rfind(':');
  const std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  const int port = colon == std::string::npos ? 6379 : std::atoi(address.c_str() + colon + 1);
  Context c(redisConnectWithTimeout(host.c_str(), port, timeval{2, 0}));
  if (!c || c->err != 0)
    throw std::runtime_error("cannot connect to Redis at " + address + ": " +
                             (c ? c->errstr : "out of memory"));
  // Replies too (hiredis 0.14 times out only the connect): a broker that
  // hangs fails a send instead of blocking its thread; BLPOP's 0.1 s fits.
  redisSetTimeout(c.get(), timeval{1, 0});
  return c;
}

Reply command(redisContext* c, const std::string& address, const char* format, const std::string& a,
              const std::string& b = "") {
  Reply r(
      static_cast<redisReply*>(redisCommand(c, format, a.data(), a.size(), b.data(), b.size())));
  if (!r) throw std::runtime_error("Redis at " + address + " stopped answering: " + c->errstr);
  if (r->type == REDIS_REPLY_ERROR)
    throw std::runtime_error("Redis at " + address + " refused a command: " + r->str);
  return r;
}

std::string queue_key(const std::string& destination) { return "shop:queue:" + destination; }

// One connection per sending thread (hiredis contexts are not thread-safe);
// a broken one is replaced at the next send.
redisContext* sender_connection(const std::string& address) {
  thread_local Context c;
  thread_local std::string connected_to;
  if (!c || c->err != 0 || connected_to != address) {
    c = connect(address);
    connected_to = address;
  }
  return c.get();
}

}  // namespace

void check_redis(const std::string& address) {
  Context c = connect(address);
  Reply r(static_cast<redisReply*>(redisCommand(c.get(), "PING")));
  if (!r || r->type != REDIS_REPLY_STATUS)
    throw std::runtime_error("Redis at " + address + " does not answer PING" +
                             (r && r->type == REDIS_REPLY_ERROR ? std::string(": ") + r->str : ""));
}

void MessageBus::send_redis(const std::string& destination, const std::string& body) {
  redisContext* c = sender_connection(redis_address_);
  const std::string key = queue_key(destination);
  Reply pushed = command(c, redis_address_, "RPUSH %b %b", key, body);
  long long length = pushed->integer;
  // Over capacity: wait until the consumer has taken it back down to
  // capacity, polling with a growing pause (200 us .. 5 ms) so waiting
  // senders do not flood the broker with LLENs.
  auto pause = std::chrono::microseconds(200);
  while (length > static_cast<long long>(kCapacity) && !stopping_) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
    length = command(c, redis_address_, "LLEN %b", key)->integer;
  }
}

void MessageBus::clear_redis_queue(const std::string& destination) {
  Context c = connect(redis_address_);
  command(c.get(), redis_address_, "DEL %b", queue_key(destination));
}

void MessageBus::consume_redis(const std::string& destination, Queue& q) {
  const std::string key = queue_key(destination);
  Context c;
  for (;;) {
    std::string body;
    try {
      if (!c || c->err != 0) c = connect(redis_address_);
      // Short blocking pops, so a stop is noticed; stop once stopping and drained.
      Reply r(
          static_cast<redisReply*>(redisCommand(c.get(), "BLPOP %b 0.1", key.data(), key.size())));
      if (!r) throw std::runtime_error("Redis at " + redis_address_ + " stopped answering");
      if (r->type == REDIS_REPLY_ERROR)
        throw std::runtime_error("Redis at " + redis_address_ + " refused BLPOP: " + r->str);
      if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        if (stopping_) return;
        continue;
      }
      body.assign(r->element[1]->str, r->element[1]->len);
    } catch (const std::exception& e) {
      // The broker failed: say so, back off, reconnect (it may come back).
      std::fprintf(stderr, "shop: %s consumer: %s\n", destination.c_str(), e.what());
      if (stopping_) return;
      c.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    // Popped: the message is ours now; a failing handler loses only it.
    deliver_safely(destination, q, std::move(body));
  }
}

}  // namespace shop
