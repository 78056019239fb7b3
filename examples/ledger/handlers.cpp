// The ledger's endpoints and its planted problems (README.md). Every
// request runs in ledger::handle_request on its connection's thread, with
// that thread's own database connection.
// About 500 lines: one handler per endpoint, each with its planted
// problem beside the healthy path it replaces, so a reader sees both in
// one place; the server, database and JSON helpers are in their own files.
#include <time.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "ledger.hpp"

namespace ledger {

// Links of the audit hash chain kept in memory, and the CPU work per link.
constexpr size_t kAuditLinks = 256;
constexpr long kLinkRounds = 1600;

struct Ledger::Impl {
  Options o;
  std::string sqlite_file;  // empty with PostgreSQL
  std::string temp_dir;     // removed at exit

  // Checkpoints take it exclusively; every request holds it shared.
  std::shared_mutex state;

  // The audit chain: each transfer's digest linked to the previous head.
  std::mutex audit_mutex;
  uint64_t audit_head = 0x6c6564676572ULL;
  std::deque<std::pair<uint64_t, uint64_t>> audit_links;  // (digest, link)

  std::unique_ptr<FxProvider> fx;
  std::unique_ptr<Events> events;  // with --redis
  std::mutex rates_mutex;
  std::map<std::string, double> rates;  // "EUR>USD" → rate, refreshed in the background

  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  bool stopping = false;
  std::thread refresher, checkpointer;
  long checkpoint_rounds = 0;

  std::unique_ptr<Store> connect() const {
    return sqlite_file.empty() ? open_postgres(o.postgres) : open_sqlite(sqlite_file);
  }
};

namespace {

thread_local std::unique_ptr<Store> t_store;

Store& store_of(const Ledger::Impl& impl) {
  if (!t_store) t_store = impl.connect();
  return *t_store;
}

Response error(int status, const std::string& message) {
  return {status, "{\"error\":\"" + message + "\"}"};
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A positive integer parameter, or -1.
long long number(const std::map<std::string, std::string>& fields, const std::string& key) {
  auto it = fields.find(key);
  if (it == fields.end() || it->second.empty() || it->second.size() > 15) return -1;
  for (char c : it->second)
    if (c < '0' || c > '9') return -1;
  return std::stoll(it->second);
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Replay protection: a request whose key is already in the journal was
// handled before. One statement checks and journals; the journal grows by
// one row per request.
bool journal_request(Ledger::Impl& impl, const Request& r) {
  Store& db = store_of(impl);
  const std::string key = "c" + std::to_string(r.connection) + "-" + std::to_string(r.sequence) +
                          "-" + std::to_string(now_ms());
  std::string seen = "request_key = ?";
  if (impl.o.journal_scan) {
    // The planted Ramp: the key is read out of the JSON entry, which no
    // index covers: a full scan of a table that grows with every request.
    seen = db.is_postgres() ? "entry::json ->> 'key' = ?" : "json_extract(entry, '$.key') = ?";
  }
  const std::string entry =
      "{\"key\":" + json_string(key) + ",\"method\":" + json_string(r.method) +
      ",\"path\":" + json_string(r.path) + ",\"at\":" + std::to_string(now_ms()) + "}";
  const Rows added = db.query(
      "INSERT INTO ledger_journal (request_key, entry) SELECT ?, ? WHERE NOT EXISTS "
      "(SELECT 1 FROM ledger_journal WHERE " +
          seen + ") RETURNING id",
      {key, entry, key});
  return !added.empty();
}

Response get_account(Ledger::Impl& impl, long long id) {
  const Rows rows = store_of(impl).query(
      "SELECT id, owner, currency, balance_cents FROM ledger_account WHERE id = ?",
      {std::to_string(id)});
  if (rows.empty()) return error(404, "no such account");
  const Row& a = rows[0];
  return {200, "{\"id\":" + a[0] + ",\"owner\":" + json_string(a[1]) +
                   ",\"currency\":" + json_string(a[2]) + ",\"balance_cents\":" + a[3] + "}"};
}

std::string statement_line(const std::string& posting, const std::string& delta,
                           const std::string& memo, const std::string& at,
                           const std::string& counterparty) {
  return "{\"posting\":" + posting + ",\"delta_cents\":" + delta +
         ",\"memo\":" + json_string(memo) + ",\"at\":" + at +
         ",\"counterparty\":" + json_string(counterparty) + "}";
}

// A statement line and its amount.
struct Line {
  long long delta_cents = 0;
  std::string json;
};

// The account's last postings with memo and counterparty; `lines`, if
// given, gets each line.
Response get_statement(Ledger::Impl& impl, long long id, std::vector<Line>* lines = nullptr) {
  Store& db = store_of(impl);
  const std::string account = std::to_string(id);
  const std::string limit = std::to_string(impl.o.statement_size);
  std::string body = "{\"account\":" + account + ",\"lines\":[";
  bool first = true;
  if (!impl.o.statement_n_plus_one) {
    const Rows rows = db.query(
        "SELECT p.id, p.delta_cents, t.memo, t.created_at, COALESCE(payee.owner, payer.owner) "
        "FROM ledger_posting p JOIN ledger_transfer t ON t.id = p.transfer_id "
        "LEFT JOIN ledger_account payee ON payee.id = t.to_account AND p.delta_cents < 0 "
        "LEFT JOIN ledger_account payer ON payer.id = t.from_account AND p.delta_cents >= 0 "
        "WHERE p.account_id = ? ORDER BY p.id DESC LIMIT " +
            limit,
        {account});
    for (const Row& row : rows) {
      const std::string line = statement_line(row[0], row[1], row[2], row[3], row[4]);
      body += (first ? "" : ",") + line;
      if (lines) lines->push_back({std::stoll(row[1]), line});
      first = false;
    }
  } else {
    // The planted Stifle: the postings, then per posting its transfer,
    // then per transfer the counterparty (1 + 2N queries).
    const Rows postings = db.query(
        "SELECT id, transfer_id, delta_cents FROM ledger_posting WHERE account_id = ? "
        "ORDER BY id DESC LIMIT " +
            limit,
        {account});
    for (const Row& p : postings) {
      const Rows t = db.query(
          "SELECT from_account, to_account, memo, created_at FROM ledger_transfer WHERE id = ?",
          {p[1]});
      if (t.empty()) continue;
      const std::string other = t[0][0] == account ? t[0][1] : t[0][0];
      const Rows a = db.query("SELECT owner FROM ledger_account WHERE id = ?", {other});
      const std::string line =
          statement_line(p[0], p[2], t[0][2], t[0][3], a.empty() ? "" : a[0][0]);
      body += (first ? "" : ",") + line;
      if (lines) lines->push_back({std::stoll(p[2]), line});
      first = false;
    }
  }
  if (first && db.query("SELECT id FROM ledger_account WHERE id = ?", {account}).empty())
    return error(404, "no such account");
  return {200, body + "]}"};
}

// Movements of at least this much (250.00) are reported to compliance when
// a statement shows them.
constexpr long long kReportableCents = 25000;

// A statement as the endpoint answers it; with the event bus, its large
// movements are reported to compliance.
Response show_statement(Ledger::Impl& impl, long long id) {
  if (!impl.events) return get_statement(impl, id);
  std::vector<Line> lines;
  Response r = get_statement(impl, id, &lines);
  if (r.status != 200) return r;
  const std::string account = std::to_string(id);
  if (impl.o.event_per_line) {
    // The planted Empty Semi Trucks: one message per reportable line,
    // where one message could carry them all.
    for (const Line& line : lines)
      if (std::llabs(line.delta_cents) >= kReportableCents)
        impl.events->publish("statements", "compliance",
                             "{\"account\":" + account + ",\"line\":" + line.json + "}");
    return r;
  }
  std::string batch;
  for (const Line& line : lines)
    if (std::llabs(line.delta_cents) >= kReportableCents)
      batch += (batch.empty() ? "" : ",") + line.json;
  if (!batch.empty())
    impl.events->publish("statements", "compliance",
                         "{\"account\":" + account + ",\"lines\":[" + batch + "]}");
  return r;
}

// After a transfer is booked: its event to the components that follow
// transfers.
void announce_transfer(Ledger::Impl& impl, const std::string& id, const std::string& from,
                       const std::string& to, const std::string& amount) {
  const std::string event = "{\"transfer\":" + id + ",\"from\":" + from + ",\"to\":" + to +
                            ",\"amount_cents\":" + amount + "}";
  for (const char* component : {"notifier", "risk", "balances"})
    impl.events->publish("transfers", component, event);
  if (impl.o.bulk_events) {
    // The planted Excessive Messaging (messaging misused for bulk data):
    // both accounts' whole statements go to the archive with every
    // transfer, where the archive could read the two new postings.
    for (const std::string& account : {from, to})
      impl.events->publish("transfers", "archive", get_statement(impl, std::stoll(account)).body);
  }
}

// Not instrumented: the planted CPU work below calls these in its loops,
// and a monitored call per loop round would plant millions of events
// instead of CPU time.
[[gnu::no_instrument_function]] double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Burns `ms` of the calling thread's CPU time (--forecast-cpu's share of
// every request): CPU time, not loop rounds, so the demand is the same at
// any speed of the machine.
[[gnu::no_instrument_function]] void burn_cpu_ms(double ms) {
  const double until = thread_cpu_seconds() + ms / 1e3;
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  while (thread_cpu_seconds() < until) {
    for (int i = 0; i < 1000; ++i) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
    }
  }
  if (state == 42) std::cerr << "ledger: unlucky burn\n";
}

// Interest forecast for the coming months.
Response get_forecast(Ledger::Impl& impl, long long id, long long months) {
  const Rows rows = store_of(impl).query("SELECT balance_cents FROM ledger_account WHERE id = ?",
                                         {std::to_string(id)});
  if (rows.empty()) return error(404, "no such account");
  const double balance = std::stod(rows[0][0]) / 100.0;
  const double rate = 0.021;  // per year
  double expected, low, high;
  if (!impl.o.forecast_cpu) {
    // Closed form: the expected balance and a ±2σ band for a rate with a
    // yearly volatility of 0.5 points.
    expected = balance * std::pow(1 + rate / 12, static_cast<double>(months));
    const double spread = 0.005 * std::sqrt(static_cast<double>(months) / 12.0);
    low = expected * (1 - 2 * spread);
    high = expected * (1 + 2 * spread);
  } else {
    // The planted CPU-heavy endpoint: the same figures by Monte Carlo,
    // paths of daily compounding with a random rate each day, as many as
    // 8 ms of the thread's CPU time allow (at least 50). A fixed 2000 paths
    // took 12-14 ms alone, from hour to hour of the test VM, against the
    // service's 20 ms: the case's label depended on the machine's speed
    // (scenarios/ledger/README.md, l06).
    constexpr int kMinPaths = 50;
    const double budget_end = thread_cpu_seconds() + 0.008;
    const int days = static_cast<int>(months) * 30;
    uint64_t state = 0x2545f4914f6cdd1dULL ^ static_cast<uint64_t>(id);
    double sum = 0, sum2 = 0;
    int paths = 0;
    // The clock is read every 16 paths (a path took ~6.5 us at 12 months).
    for (; paths < kMinPaths || (paths % 16 != 0 || thread_cpu_seconds() < budget_end); ++paths) {
      double log_value = 0;
      for (int d = 0; d < days; ++d) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        const double u = static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);
        log_value += std::log1p((rate + 0.005 * (u - 0.5) * 3.4641) / 365.0);
      }
      const double v = balance * std::exp(log_value);
      sum += v;
      sum2 += v * v;
    }
    expected = sum / paths;
    const double sd = std::sqrt(std::max(0.0, sum2 / paths - expected * expected));
    low = expected - 2 * sd;
    high = expected + 2 * sd;
  }
  return {200, "{\"account\":" + std::to_string(id) + ",\"months\":" + std::to_string(months) +
                   ",\"expected\":" + std::to_string(expected) + ",\"low\":" + std::to_string(low) +
                   ",\"high\":" + std::to_string(high) + "}"};
}

// Links a transfer into the audit chain.
uint64_t seal_transfer(Ledger::Impl& impl, uint64_t digest) {
  std::lock_guard lock(impl.audit_mutex);
  // The planted One Lane Bridge: before appending, every request
  // re-verifies the whole in-memory chain (the nightly check's job),
  // holding the chain's global mutex while it hashes; --audit-lock-long
  // verifies it twice, so that scenario l07's requirement is clearly
  // violated under load in every run (scenarios/README.md, the 1.25x rule).
  const int verifications = impl.o.audit_lock_long ? 2 : impl.o.audit_lock ? 1 : 0;
  for (int pass = 0; pass < verifications; ++pass) {
    uint64_t previous = 0x6c6564676572ULL;
    for (const auto& [d, link] : impl.audit_links) {
      if (mix_rounds(previous ^ d, kLinkRounds) != link && previous != 0x6c6564676572ULL)
        std::cerr << "ledger: audit chain broken\n";
      previous = link;
    }
  }
  const uint64_t link = mix_rounds(impl.audit_head ^ digest, kLinkRounds);
  impl.audit_links.emplace_back(digest, link);
  if (impl.audit_links.size() > kAuditLinks) impl.audit_links.pop_front();
  impl.audit_head = link;
  return link;
}

Response post_transfer(Ledger::Impl& impl, const Request& r) {
  const long long from = number(r.query, "from"), to = number(r.query, "to"),
                  amount = number(r.query, "amount");
  if (from <= 0 || to <= 0 || amount <= 0) return error(400, "from, to and amount are required");
  if (from == to) return error(422, "from and to are the same account");
  auto memo_it = r.query.find("memo");
  const std::string memo = memo_it == r.query.end() ? "payment" : memo_it->second;
  Store& db = store_of(impl);
  const std::string f = std::to_string(from), t = std::to_string(to), a = std::to_string(amount);
  std::string transfer_id;
  db.begin_write();
  try {
    // Both accounts, in id order (no deadlock between opposite transfers).
    const Rows accounts = db.query(
        "SELECT id, balance_cents FROM ledger_account WHERE id IN (?, ?) ORDER BY id", {f, t});
    if (accounts.size() != 2) {
      db.query("ROLLBACK", {});
      return error(404, "no such account");
    }
    const std::string& from_balance = accounts[0][0] == f ? accounts[0][1] : accounts[1][1];
    if (std::stoll(from_balance) < amount) {
      db.query("ROLLBACK", {});
      return error(409, "insufficient funds");
    }
    for (const Row& account : accounts)
      db.query("UPDATE ledger_account SET balance_cents = balance_cents + ? WHERE id = ?",
               {account[0] == f ? "-" + a : a, account[0]});
    const Rows inserted = db.query(
        "INSERT INTO ledger_transfer (from_account, to_account, amount_cents, invoice, memo, "
        "created_at) VALUES (?, ?, ?, 0, ?, ?) RETURNING id",
        {f, t, a, memo, std::to_string(now_ms())});
    transfer_id = inserted.at(0).at(0);
    db.query(
        "INSERT INTO ledger_posting (transfer_id, account_id, delta_cents) VALUES (?, ?, ?), "
        "(?, ?, ?)",
        {transfer_id, f, "-" + a, transfer_id, t, a});
    db.query("COMMIT", {});
  } catch (const StoreError&) {
    try {
      db.query("ROLLBACK", {});
    } catch (const StoreError&) {
    }
    throw;
  }
  const uint64_t digest = std::hash<std::string>{}(transfer_id + ":" + f + ">" + t + ":" + a);
  const uint64_t link = seal_transfer(impl, digest);
  if (impl.events) announce_transfer(impl, transfer_id, f, t, a);
  return {200, "{\"transfer\":" + transfer_id + ",\"from\":" + f + ",\"to\":" + t +
                   ",\"amount_cents\":" + a + ",\"seal\":\"" + std::to_string(link) + "\"}"};
}

// Transfers by invoice number.
Response search_transfers(Ledger::Impl& impl, long long invoice) {
  const std::string sql =
      impl.o.search_scan
          // The planted Expensive Database Call: the invoice number is
          // searched as text in every memo (a full scan) and the matches
          // sorted by amount.
          ? "SELECT t.id, t.amount_cents, t.memo, a.owner FROM ledger_transfer t "
            "JOIN ledger_account a ON a.id = t.from_account "
            "WHERE t.memo LIKE 'invoice ' || CAST(? AS TEXT) || ' %' ORDER BY t.amount_cents DESC, "
            "t.id "
            "LIMIT 20"
          : "SELECT t.id, t.amount_cents, t.memo, a.owner FROM ledger_transfer t "
            "JOIN ledger_account a ON a.id = t.from_account "
            "WHERE t.invoice = ? ORDER BY t.amount_cents DESC, t.id LIMIT 20";
  const Rows rows = store_of(impl).query(sql, {std::to_string(invoice)});
  std::string body = "{\"invoice\":" + std::to_string(invoice) + ",\"transfers\":[";
  for (size_t i = 0; i < rows.size(); ++i)
    body += (i ? "," : "") + std::string("{\"id\":") + rows[i][0] +
            ",\"amount_cents\":" + rows[i][1] + ",\"memo\":" + json_string(rows[i][2]) +
            ",\"from\":" + json_string(rows[i][3]) + "}";
  return {200, body + "]}"};
}

Response get_fx(Ledger::Impl& impl, const Request& r) {
  auto field = [&](const char* key, const char* fallback) {
    auto it = r.query.find(key);
    return it == r.query.end() || it->second.size() != 3 ? std::string(fallback) : it->second;
  };
  const std::string from = field("from", "EUR"), to = field("to", "USD");
  const long long amount = number(r.query, "amount");
  if (amount < 0) return error(400, "amount is required");
  double rate;
  if (impl.o.slow_fx) {
    // The planted slow external call: every conversion asks the provider.
    rate = fetch_fx_rate(impl.fx->port(), from, to);
  } else {
    std::lock_guard lock(impl.rates_mutex);
    auto it = impl.rates.find(from + ">" + to);
    if (it == impl.rates.end()) return error(503, "no rate yet for " + from + ">" + to);
    rate = it->second;
  }
  return {200, "{\"from\":" + json_string(from) + ",\"to\":" + json_string(to) +
                   ",\"rate\":" + std::to_string(rate) +
                   ",\"amount_cents\":" + std::to_string(amount) + ",\"converted_cents\":" +
                   std::to_string(std::llround(static_cast<double>(amount) * rate)) + "}"};
}

// "/accounts/17/statement" → {"accounts", "17", "statement"}
std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t begin = 1;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    if (end > begin) out.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

long long id_of(const std::string& s) { return number({{"id", s}}, "id"); }

void refresh_rates(Ledger::Impl& impl) {
  std::map<std::string, double> rates = fetch_fx_table(impl.fx->port());
  std::lock_guard lock(impl.rates_mutex);
  impl.rates.swap(rates);
}

// A checkpoint: reads every balance and seals the snapshot, all while
// holding the state lock exclusively (with --checkpoint-pauses).
void checkpoint(Ledger::Impl& impl, Store& db) {
  std::unique_lock lock(impl.state);
  const Rows balances = db.query("SELECT id, balance_cents FROM ledger_account ORDER BY id", {});
  uint64_t seal = 0;
  for (const Row& row : balances) seal = (seal ^ std::hash<std::string>{}(row[1])) * 31;
  seal = mix_rounds(seal, impl.checkpoint_rounds);
  if (seal == 42) std::cerr << "ledger: unlucky seal\n";
}

}  // namespace

// One request; its outermost call is the request's trace
// (trace_start=ledger::handle_request*).
Response handle_request(Ledger::Impl& impl, const Request& r) {
  std::shared_lock state(impl.state);
  const std::vector<std::string> path = segments(r.path);
  if (path.size() == 1 && path[0] == "health") return {200, "{\"ok\":true}"};
  try {
    if (!journal_request(impl, r)) return error(409, "replayed request");
    // --forecast-cpu: a CPU-heavy application, the forecast most of all
    // (TC10): every request costs 0.5 ms of CPU more, so the cores
    // saturate at the series' top loads while one user stays far under
    // the forecast's requirement.
    if (impl.o.forecast_cpu) burn_cpu_ms(0.5);
    if (path.size() >= 2 && path[0] == "accounts") {
      const long long id = id_of(path[1]);
      if (id <= 0) return error(400, "bad account id");
      if (r.method != "GET") return error(405, "GET only");
      if (path.size() == 2) return get_account(impl, id);
      if (path.size() == 3 && path[2] == "statement") return show_statement(impl, id);
      if (path.size() == 3 && path[2] == "forecast") {
        long long months = number(r.query, "months");
        if (months < 0) months = 12;
        if (months == 0 || months > 120) return error(400, "months must be 1..120");
        return get_forecast(impl, id, months);
      }
    } else if (path.size() == 1 && path[0] == "transfers") {
      if (r.method == "POST") return post_transfer(impl, r);
      const long long invoice = number(r.query, "invoice");
      if (invoice < 0) return error(400, "invoice is required");
      return search_transfers(impl, invoice);
    } else if (path.size() == 1 && path[0] == "fx") {
      return get_fx(impl, r);
    }
    return error(404, "no such endpoint");
  } catch (const StoreError& e) {
    return error(500, e.what());
  } catch (const EventError& e) {
    return error(503, e.what());
  } catch (const std::exception& e) {
    return error(500, std::string("internal error: ") + e.what());
  }
}

Ledger::Ledger(const Options& o) : impl_(std::make_unique<Impl>()) {
  impl_->o = o;
  if (o.postgres.empty()) {
    impl_->sqlite_file = prepare_sqlite(o, impl_->temp_dir);
  } else {
    prepare_postgres(o);
  }
  impl_->fx = std::make_unique<FxProvider>(o.fx_delay_ms);
  if (!o.redis.empty()) impl_->events = std::make_unique<Events>(o);
  if (o.checkpoint_rounds > 0) {
    impl_->checkpoint_rounds = o.checkpoint_rounds;
  } else {
    // About 300 ms of this machine's CPU per checkpoint.
    const double start = thread_cpu_seconds();
    constexpr long kProbe = 200000;
    mix_rounds(7, kProbe);
    const double per_round = std::max(1e-10, (thread_cpu_seconds() - start) / kProbe);
    impl_->checkpoint_rounds = static_cast<long>(0.3 / per_round);
  }
}

Ledger::~Ledger() {
  stop();
  t_store.reset();
  if (!impl_->temp_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(impl_->temp_dir, ec);
  }
}

void Ledger::start() {
  Impl& impl = *impl_;
  refresh_rates(impl);
  impl.refresher = std::thread([&impl] {
    std::unique_lock lock(impl.stop_mutex);
    while (!impl.stop_cv.wait_for(lock, std::chrono::seconds(5), [&] { return impl.stopping; })) {
      lock.unlock();
      try {
        refresh_rates(impl);
      } catch (const StoreError& e) {
        std::cerr << "ledger: rate refresh failed: " << e.what() << "\n";
      }
      lock.lock();
    }
  });
  if (impl.events) impl.events->start();
  if (impl.o.checkpoint_pauses)
    impl.checkpointer = std::thread([&impl] {
      std::unique_ptr<Store> db = impl.connect();
      std::unique_lock lock(impl.stop_mutex);
      while (!impl.stop_cv.wait_for(lock, std::chrono::milliseconds(impl.o.checkpoint_period_ms),
                                    [&] { return impl.stopping; })) {
        lock.unlock();
        try {
          checkpoint(impl, *db);
        } catch (const StoreError& e) {
          std::cerr << "ledger: checkpoint failed: " << e.what() << "\n";
        }
        lock.lock();
      }
    });
}

void Ledger::stop() {
  {
    std::lock_guard lock(impl_->stop_mutex);
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
  if (impl_->refresher.joinable()) impl_->refresher.join();
  if (impl_->checkpointer.joinable()) impl_->checkpointer.join();
  if (impl_->events) impl_->events->stop();
}

Response Ledger::handle(const Request& r) { return handle_request(*impl_, r); }

}  // namespace ledger
