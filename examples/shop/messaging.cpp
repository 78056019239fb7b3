// In-process message queues between the shop's components.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>

#include "shop.hpp"

namespace shop {
namespace {

// sonde's messaging probe, if the program runs under a libsonde that has it
// (looked up at run time: the shop is not linked with libsonde).
using RecordSend = void (*)(const char*, std::int64_t, std::int64_t);
RecordSend record_send() {
  static const RecordSend fn =
      reinterpret_cast<RecordSend>(dlsym(RTLD_DEFAULT, "sonde_record_message_send"));
  return fn;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

MessageBus::MessageBus(std::string redis_address) : redis_address_(std::move(redis_address)) {
  if (!redis_address_.empty()) check_redis(redis_address_);
}

void MessageBus::subscribe(const std::string& destination, Handler handler) {
  // A queue left in the broker by an earlier (killed) shop is not ours.
  if (!redis_address_.empty()) clear_redis_queue(destination);
  auto queue = std::make_unique<Queue>();
  queue->handler = std::move(handler);
  Queue& q = *queue;
  queues_[destination] = std::move(queue);
  q.consumer = std::thread([this, destination, &q] {
    if (redis_address_.empty())
      consume(destination, q);
    else
      consume_redis(destination, q);
  });
}

void MessageBus::send(const std::string& from, const std::string& destination, std::string body) {
  const std::int64_t start = now_ns();
  const auto bytes = static_cast<std::int64_t>(body.size());
  Queue& q = *queues_.at(destination);
  if (!redis_address_.empty()) {
    send_redis(destination, body);
  } else {
    {
      std::unique_lock lock(q.mutex);
      q.space.wait(lock, [&] { return stopping_ || q.items.size() < kCapacity; });
      q.items.push_back(std::move(body));
    }
    q.ready.notify_one();
  }
  if (RecordSend fn = record_send())
    fn((from + ">" + destination).c_str(), bytes, now_ns() - start);
}

// The broker's per-message work and the link's transfer time, then the
// component's handler.
void MessageBus::deliver(const std::string& destination, Queue& q, std::string body) {
  const auto transfer_us =
      static_cast<long>(static_cast<double>(body.size()) * 1e6 / kLinkBytesPerSecond);
  std::this_thread::sleep_for(std::chrono::microseconds(kDeliveryOverheadUs + transfer_us));
  q.handler(Message{destination, std::move(body)});
  ++delivered_;
}

// A handler that throws (e.g. the database busy) loses its message, says
// so, and the consumer goes on: it must not take the process down.
void MessageBus::deliver_safely(const std::string& destination, Queue& q, std::string body) {
  try {
    deliver(destination, q, std::move(body));
  } catch (const std::exception& e) {
    ++failed_;
    std::fprintf(stderr, "shop: a message to %s failed: %s\n", destination.c_str(), e.what());
  }
}

void MessageBus::consume(const std::string& destination, Queue& q) {
  for (;;) {
    std::string body;
    {
      std::unique_lock lock(q.mutex);
      q.ready.wait(lock, [&] { return stopping_ || !q.items.empty(); });
      if (q.items.empty()) return;  // stopping and drained
      body = std::move(q.items.front());
      q.items.pop_front();
    }
    q.space.notify_one();
    deliver_safely(destination, q, std::move(body));
  }
}

void MessageBus::stop() {
  if (stopping_.exchange(true)) return;
  for (auto& [name, q] : queues_) {
    { std::lock_guard lock(q->mutex); }
    q->ready.notify_all();
    q->space.notify_all();
  }
  for (auto& [name, q] : queues_)
    if (q->consumer.joinable()) q->consumer.join();
}

MessageBus::~MessageBus() { stop(); }

}  // namespace shop
