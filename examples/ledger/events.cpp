// The ledger's event bus over Redis (--redis HOST:PORT, README.md "Events").
//
// Every consuming component has a list `ledger:queue:<component>` and a
// list of credits `ledger:credits:<component>` that starts with
// --queue-capacity tokens. A sender moves a credit to
// `ledger:held:<component>` (BLMOVE) before it pushes its message (RPUSH);
// the consumer moves it back (LMOVE) once it handled the message. Credits
// move rather than being pushed, so a broker sampler that counts pushes
// (RPUSH, LPUSH, ...) as messages counts the messages only. A queue holds
// at most --queue-capacity messages, and a
// consumer that cannot keep up makes its senders wait, as a broker with
// flow control does. Each consumer is a thread with its own connection; it
// handles a message with a downstream round trip (--event-handling-us:
// the push gateway, the risk engine, the dashboard feed; the archive also
// moves the message's bytes over its --archive-kbps link).
#include <dlfcn.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <thread>

#include "ledger.hpp"

namespace ledger {
namespace {

// The components that consume events. The router only consumes with
// --event-router; the archive only receives with --bulk-events.
const char* const kConsumers[] = {"notifier",   "risk",    "balances",
                                  "compliance", "archive", "router"};
constexpr int kCreditWaitSeconds = 2;

std::string queue_key(const std::string& component) { return "ledger:queue:" + component; }
std::string credit_key(const std::string& component) { return "ledger:credits:" + component; }
std::string held_key(const std::string& component) { return "ledger:held:" + component; }

// sonde's messaging probe, when the ledger runs under a libsonde that has
// it (looked up at run time: the ledger is not linked with libsonde).
using RecordSend = void (*)(const char*, int64_t, int64_t);
RecordSend record_send() {
  static const RecordSend fn =
      reinterpret_cast<RecordSend>(dlsym(RTLD_DEFAULT, "sonde_record_message_send"));
  return fn;
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Address {
  std::string host;
  int port = 0;
};

Address parse_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  Address a;
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw EventError("--redis wants HOST:PORT, not '" + text + "'");
  a.host = text.substr(0, colon);
  try {
    a.port = std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    a.port = 0;
  }
  if (a.port <= 0 || a.port > 65535) throw EventError("--redis: bad port in '" + text + "'");
  return a;
}

// One connection; reconnects on the next use after a failure.
class Connection {
 public:
  Connection(Address address, double timeout_s)
      : address_(std::move(address)), timeout_s_(timeout_s) {}
  ~Connection() { close(); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The reply of one command (never null; EventError on failure).
  std::unique_ptr<redisReply, void (*)(redisReply*)> command(int argc, const char** argv,
                                                             const size_t* lengths) {
    if (ctx_ == nullptr) open();
    auto* reply = static_cast<redisReply*>(redisCommandArgv(ctx_, argc, argv, lengths));
    if (reply == nullptr) {
      const std::string why = ctx_->errstr;
      close();
      throw EventError("Redis at " + where() + ": " + why);
    }
    std::unique_ptr<redisReply, void (*)(redisReply*)> owned(
        reply, [](redisReply* r) { freeReplyObject(r); });
    if (reply->type == REDIS_REPLY_ERROR)
      throw EventError("Redis at " + where() + ": " + std::string(reply->str, reply->len));
    return owned;
  }
  // A command of string arguments.
  std::unique_ptr<redisReply, void (*)(redisReply*)> command(
      std::initializer_list<std::string> args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    return command(static_cast<int>(argv.size()), argv.data(), lengths.data());
  }

 private:
  std::string where() const { return address_.host + ":" + std::to_string(address_.port); }
  void open() {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout_s_);
    tv.tv_usec = static_cast<suseconds_t>((timeout_s_ - static_cast<double>(tv.tv_sec)) * 1e6);
    ctx_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, tv);
    if (ctx_ == nullptr || ctx_->err) {
      const std::string why = ctx_ ? ctx_->errstr : "out of memory";
      close();
      throw EventError("cannot connect to Redis at " + where() + ": " + why);
    }
    redisSetTimeout(ctx_, tv);
  }
  void close() {
    if (ctx_ != nullptr) redisFree(ctx_);
    ctx_ = nullptr;
  }
  Address address_;
  double timeout_s_;
  redisContext* ctx_ = nullptr;
};

[[gnu::no_instrument_function]] void wait_us(double us) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
}

}  // namespace

struct Events::Impl {
  Options o;
  Address address;
  // Distinguishes this bus from an earlier one at the same address, for
  // the threads' connections.
  uint64_t id = next_id.fetch_add(1);
  static inline std::atomic<uint64_t> next_id{1};
  std::atomic<bool> stopping{false};
  std::vector<std::thread> consumers;

  // The publishing thread's own connection (hiredis contexts are not
  // shared between threads).
  Connection& connection() {
    thread_local std::unique_ptr<Connection> mine;
    thread_local uint64_t owner = 0;
    if (!mine || owner != id) {
      // Long enough for a credit wait.
      mine = std::make_unique<Connection>(address, kCreditWaitSeconds + 1.0);
      owner = id;
    }
    return *mine;
  }
};

namespace {

// Gives a credit of `component` back (held -> credits). A failed command
// closed the connection; the next try reconnects. false: still failing.
bool return_credit(Connection& c, const std::string& component) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      c.command({"LMOVE", held_key(component), credit_key(component), "LEFT", "RIGHT"});
      return true;
    } catch (const EventError&) {
      wait_us(50000);
    }
  }
  return false;
}

// Takes a credit of `to`'s queue and pushes `message` there. A push that
// fails gives its credit back, so a broken connection does not shrink the
// queue.
void push_with_credit(Events::Impl& impl, const std::string& to, const std::string& message) {
  Connection& c = impl.connection();
  const auto credit = c.command({"BLMOVE", credit_key(to), held_key(to), "LEFT", "RIGHT",
                                 std::to_string(kCreditWaitSeconds)});
  if (credit->type == REDIS_REPLY_NIL)
    throw EventError("event queue '" + to + "' stayed full for " +
                     std::to_string(kCreditWaitSeconds) + " s");
  try {
    c.command({"RPUSH", queue_key(to), message});
  } catch (const EventError&) {
    if (!return_credit(c, to))
      std::cerr << "ledger: a credit of '" << to << "' could not be given back\n";
    throw;
  }
}

// What a consumer does with one message: the downstream round trip, and
// for the archive the message's bytes over its link.
void handle_event(Events& events, Events::Impl& impl, const std::string& component,
                  const std::string& message) {
  wait_us(impl.o.event_handling_us);
  if (component == "archive")
    wait_us(static_cast<double>(message.size()) * 1e3 / impl.o.archive_kbps);
  if (component == "router") {
    // "<to>\n<payload>": forwarded to its component.
    const size_t end = message.find('\n');
    if (end == std::string::npos) return;
    events.publish("router", message.substr(0, end), message.substr(end + 1));
  }
}

void consume(Events& events, Events::Impl& impl, const std::string& component) {
  Connection c(impl.address, 1.0);
  while (!impl.stopping.load()) {
    std::string message;
    try {
      const auto reply = c.command({"BLPOP", queue_key(component), "0.2"});
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) continue;
      message.assign(reply->element[1]->str, reply->element[1]->len);
    } catch (const EventError& e) {
      // The connection is gone; the next command reconnects. Once a
      // second, not in a loop of lines.
      std::cerr << "ledger: " << component << " consumer: " << e.what() << "\n";
      wait_us(1e6);
      continue;
    }
    try {
      handle_event(events, impl, component, message);
    } catch (const std::exception& e) {
      // At shutdown the router's forward may find its receiver gone.
      if (!impl.stopping.load())
        std::cerr << "ledger: " << component << " could not handle an event: " << e.what() << "\n";
    }
    if (!return_credit(c, component))
      std::cerr << "ledger: " << component << " could not give a credit back (Redis at "
                << impl.o.redis << " unreachable): its queue holds one message less\n";
  }
}

}  // namespace

Events::Events(const Options& o) : impl_(std::make_unique<Impl>()) {
  impl_->o = o;
  impl_->address = parse_address(o.redis);
  // Queues and credits an earlier (killed) ledger left are not this one's.
  Connection& c = impl_->connection();
  for (const char* component : kConsumers) {
    c.command({"DEL", queue_key(component), credit_key(component), held_key(component)});
    std::vector<std::string> args = {"RPUSH", credit_key(component)};
    args.resize(2 + static_cast<size_t>(o.queue_capacity), "1");
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    c.command(static_cast<int>(argv.size()), argv.data(), lengths.data());
  }
}

Events::~Events() { stop(); }

void Events::start() {
  for (const char* component : kConsumers) {
    if (std::string(component) == "router" && !impl_->o.event_router) continue;
    impl_->consumers.emplace_back([this, component] { consume(*this, *impl_, component); });
  }
}

void Events::stop() {
  impl_->stopping = true;
  for (std::thread& t : impl_->consumers)
    if (t.joinable()) t.join();
  impl_->consumers.clear();
}

void Events::publish(const char* sender, const std::string& to, const std::string& payload) {
  const int64_t start = steady_ns();
  const bool routed = impl_->o.event_router && std::string(sender) != "router";
  // The planted Blob (--event-router): every event goes to the router,
  // which forwards it; the healthy bus sends it to its component.
  const std::string receiver = routed ? "router" : to;
  push_with_credit(*impl_, receiver, routed ? to + "\n" + payload : payload);
  if (RecordSend record = record_send())
    record((std::string(sender) + ">" + receiver).c_str(), static_cast<int64_t>(payload.size()),
           steady_ns() - start);
}

}  // namespace ledger
