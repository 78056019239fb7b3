// The ticket office's endpoints, its event cache and its planted problems
// (README.md lists them). Answers are JSON.
//
// Over 500 lines on purpose: the helpers the endpoints call (the seat
// choice, the transaction guard) stay in this file's anonymous namespace,
// because their names and their inlining into the endpoints are part of
// the traces the third system's validation run measured
// (scenarios/tickets/README.md); moved to a file of their own they would
// become calls across translation units with other names.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string_view>

#include "tickets.hpp"

namespace tickets {
namespace {

// The catalog's "today" (2026-12-31 00:00 UTC), so that prices do not
// depend on the wall clock; the first event is on the next day.
constexpr std::int64_t kToday = 1798675200;
const char* const kSections[] = {"A", "B", "C", "D", "E"};

bool parse_id(std::string_view text, std::int64_t& out) {
  if (text.empty() || text.size() > 12) return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

std::vector<std::string_view> path_segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const std::size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  return out;
}

// A query or form value as a number in [low, high]; false if missing or not.
bool number_of(const Request& r, const char* name, std::int64_t low, std::int64_t high,
               std::int64_t& out) {
  const auto it = r.query.find(name);
  return it != r.query.end() && parse_id(it->second, out) && out >= low && out <= high;
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Seat {
  std::int64_t number = 0;
  std::string section;
  std::int64_t price_cents = 0;
};

// How good the view from a seat is for one weighting of the guests'
// preferences (centre against front): the seats are numbered row by row,
// 20 to a row.
double view_score(std::int64_t seat, int weighting) {
  const double row = static_cast<double>((seat - 1) / 20);
  const double across = static_cast<double>((seat - 1) % 20) - 9.5;
  const double centre = 1.0 / (1.0 + across * across / 40.0);
  const double front = 1.0 / (1.0 + row / 6.0);
  const double w = (weighting % 10) / 10.0;
  return w * centre + (1.0 - w) * front;
}

// The best `count` free seats: neighbours in one section if any block of
// them is free, each block scored over `rounds` weightings of the
// preferences; else the best single seats. Indices into `free`.
std::vector<std::size_t> best_seats(const std::vector<Seat>& free, std::size_t count, int rounds) {
  std::vector<std::size_t> chosen;
  double best = -1;
  for (std::size_t first = 0; first + count <= free.size(); ++first) {
    const Seat& a = free[first];
    const Seat& z = free[first + count - 1];
    if (z.number - a.number != static_cast<std::int64_t>(count) - 1 || z.section != a.section)
      continue;
    double score = 0;
    for (int w = 0; w < rounds; ++w)
      for (std::size_t k = 0; k < count; ++k) score += view_score(free[first + k].number, w);
    if (score > best) {
      best = score;
      chosen.clear();
      for (std::size_t k = 0; k < count; ++k) chosen.push_back(first + k);
    }
  }
  if (!chosen.empty()) return chosen;
  std::vector<std::pair<double, std::size_t>> singles;
  for (std::size_t i = 0; i < free.size(); ++i) {
    double score = 0;
    for (int w = 0; w < rounds; ++w) score += view_score(free[i].number, w);
    singles.emplace_back(-score, i);
  }
  std::sort(singles.begin(), singles.end());
  for (std::size_t k = 0; k < count && k < singles.size(); ++k) chosen.push_back(singles[k].second);
  return chosen;
}

// A write transaction that rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(Catalog& c) : c_(c) { c_.exec("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) {
      try {
        c_.exec("ROLLBACK");
      } catch (const std::exception&) {
        // The connection rolled back already (SQLite does on some errors).
      }
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    c_.exec("COMMIT");
    done_ = true;
  }

 private:
  Catalog& c_;
  bool done_ = false;
};

}  // namespace

BoxOffice::BoxOffice(const Options& o, Catalog& catalog)
    : o_(o), catalog_(catalog), payments_(o.payment_delay_ms) {
  if (o.slow_fraud_check) fraud_ = std::make_unique<RemoteService>(o.fraud_delay_ms);
  // The refresh's hashing: about 300 ms in all, spread over the events.
  refresh_rounds_ = o.refresh_rounds > 0 ? o.refresh_rounds
                                         : std::max<std::int64_t>(1, rounds_for_ms(300) / o.events);
  cache_ = load_summaries(0);
}

BoxOffice::~BoxOffice() { stop(); }

void BoxOffice::start() {
  refresher_ = std::thread([this] { refresh_loop(); });
}

void BoxOffice::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

std::vector<EventSummary> BoxOffice::load_summaries(std::int64_t rounds) {
  std::vector<EventSummary> out;
  {
    Query q = catalog_.query(
        "SELECT e.id, e.title, v.name, v.city, e.starts_at,"
        " (SELECT COUNT(*) FROM tk_seat s WHERE s.event_id = e.id AND s.sold = 1)"
        " FROM tk_event e JOIN tk_venue v ON v.id = e.venue_id ORDER BY e.id");
    while (q.step()) {
      EventSummary e;
      e.id = q.integer(0);
      e.title = q.text(1);
      e.venue = q.text(2);
      e.city = q.text(3);
      e.starts_at = q.integer(4);
      e.sold = q.integer(5);
      out.push_back(std::move(e));
    }
  }  // the read ends before the hashing: no snapshot held for 300 ms
  // Popularity: a hash chain over the sales, the refresh's CPU work.
  for (EventSummary& e : out)
    e.popularity = mix_rounds(static_cast<std::uint64_t>(e.id * 1000003 + e.sold), rounds);
  return out;
}

// Every --refresh-period-ms the event cache is rebuilt from the database.
// Done right, the new cache is built aside and swapped in; with
// --refresh-pauses it is rebuilt in place under the cache's exclusive lock,
// and every request that reads the cache waits for the whole rebuild.
void BoxOffice::refresh_loop() {
  std::unique_lock lock(stop_mutex_);
  for (;;) {
    if (stop_cv_.wait_for(lock, std::chrono::milliseconds(o_.refresh_period_ms),
                          [this] { return stopping_; }))
      return;
    lock.unlock();
    try {
      if (o_.refresh_pauses) {
        std::unique_lock exclusive(cache_mutex_);
        cache_ = load_summaries(refresh_rounds_);
      } else {
        std::vector<EventSummary> fresh = load_summaries(refresh_rounds_);
        std::unique_lock exclusive(cache_mutex_);
        cache_.swap(fresh);
      }
    } catch (const std::exception&) {
      // The database is busy or gone: keep the old cache until the next round.
    }
    lock.lock();
  }
}

bool BoxOffice::summary(std::int64_t id, EventSummary& out) {
  std::shared_lock shared(cache_mutex_);
  if (id < 1 || id > static_cast<std::int64_t>(cache_.size())) return false;
  out = cache_[static_cast<std::size_t>(id - 1)];
  return true;
}

// Whether an active hold covers the seat. The planted code asks each hold
// whether it is still active (a clock read) before it looks at its seat.
bool BoxOffice::seat_held(std::int64_t event, std::int64_t seat) {
  std::shared_lock shared(holds_mutex_);
  for (const Hold& h : holds_)
    if (h.expires_at > now_seconds() && h.event == event && h.seat == seat) return true;
  return false;
}

Response BoxOffice::handle(const Request& r) {
  const std::vector<std::string_view> s = path_segments(r.path);
  std::int64_t id = 0;
  const bool get = r.method == "GET";
  if (s.size() >= 2 && s[0] == "events" && parse_id(s[1], id)) {
    if (!get) return error_response(405, "GET only");
    if (s.size() == 2) return get_event(id);
    if (s.size() == 3 && s[2] == "seats") return get_seats(id);
  } else if (s.size() == 1 && s[0] == "orders") {
    if (r.method != "POST") return error_response(405, "POST only");
    return post_order(r);
  } else if (s.size() == 2 && s[0] == "orders" && parse_id(s[1], id)) {
    if (!get) return error_response(405, "GET only");
    return get_order(id);
  } else if (s.size() == 1 && s[0] == "search") {
    if (!get) return error_response(405, "GET only");
    const auto q = r.query.find("q");
    return search(q == r.query.end() ? std::string() : q->second);
  } else if (s.size() == 1 && s[0] == "price") {
    if (!get) return error_response(405, "GET only");
    return price(r);
  } else if (s.size() == 1 && s[0] == "health") {
    return Response{200, "{\"status\":\"ok\"}"};
  }
  return error_response(404, "no such resource: " + r.method + " " + r.path);
}

Response BoxOffice::get_event(std::int64_t id) {
  EventSummary e;
  if (!summary(id, e)) return error_response(404, "no event " + std::to_string(id));
  std::string body = "{\"id\":" + std::to_string(e.id) + ",\"title\":" + json_string(e.title) +
                     ",\"venue\":" + json_string(e.venue) + ",\"city\":" + json_string(e.city) +
                     ",\"starts_at\":" + std::to_string(e.starts_at) + ",\"sections\":[";
  Query q = catalog_.query(
      "SELECT section, COUNT(*), MIN(price_cents) FROM tk_seat WHERE event_id = ? AND sold = 0"
      " GROUP BY section ORDER BY section");
  q.bind(1, id);
  bool first = true;
  while (q.step()) {
    body += std::string(first ? "" : ",") + "{\"section\":" + json_string(q.text(0)) +
            ",\"free\":" + std::to_string(q.integer(1)) +
            ",\"from_cents\":" + std::to_string(q.integer(2)) + "}";
    first = false;
  }
  return Response{200, body + "]}"};
}

Response BoxOffice::get_seats(std::int64_t id) {
  EventSummary e;
  if (!summary(id, e)) return error_response(404, "no event " + std::to_string(id));
  struct Listed {
    std::int64_t number;
    std::string section, row, tier;
    std::int64_t price_cents;
    std::int64_t view;  // the row's view rating
  };
  std::vector<Listed> seats;
  if (!o_.seat_n_plus_one) {
    Query q = catalog_.query(
        "SELECT s.seat_no, s.section, s.row_label, c.tier, s.price_cents + c.surcharge_cents,"
        " r.rating FROM tk_seat s"
        " JOIN tk_section c ON c.event_id = s.event_id AND c.section = s.section"
        " JOIN tk_row_view r ON r.event_id = s.event_id AND r.row_label = s.row_label"
        " WHERE s.event_id = ? AND s.sold = 0 ORDER BY s.seat_no");
    q.bind(1, id);
    while (q.step())
      seats.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), q.integer(4), q.integer(5)});
  } else {
    // The planted N+1: the free seats' numbers, then each seat's row, its
    // section's tier and its row's view, one query each.
    std::vector<std::int64_t> numbers;
    {
      Query q = catalog_.query(
          "SELECT seat_no FROM tk_seat WHERE event_id = ? AND sold = 0 ORDER BY seat_no");
      q.bind(1, id);
      while (q.step()) numbers.push_back(q.integer(0));
    }
    for (std::int64_t n : numbers) {
      Listed l{n, "", "", "", 0, 0};
      {
        Query q = catalog_.query(
            "SELECT section, row_label, price_cents FROM tk_seat WHERE event_id = ? AND seat_no = "
            "? AND sold = 0");
        q.bind(1, id).bind(2, n);
        if (!q.step()) continue;  // sold meanwhile
        l.section = q.text(0);
        l.row = q.text(1);
        l.price_cents = q.integer(2);
      }
      {
        Query t = catalog_.query(
            "SELECT tier, surcharge_cents FROM tk_section WHERE event_id = ? AND section = ?");
        t.bind(1, id).bind(2, l.section);
        if (!t.step()) continue;
        l.tier = t.text(0);
        l.price_cents += t.integer(1);
      }
      Query v =
          catalog_.query("SELECT rating FROM tk_row_view WHERE event_id = ? AND row_label = ?");
      v.bind(1, id).bind(2, l.row);
      if (!v.step()) continue;
      l.view = v.integer(0);
      seats.push_back(std::move(l));
    }
  }
  std::string body =
      "{\"event\":" + std::to_string(id) + ",\"title\":" + json_string(e.title) + ",\"seats\":[";
  bool first = true;
  for (const Listed& l : seats) {
    if (o_.unpruned_holds && seat_held(id, l.number)) continue;
    body += std::string(first ? "" : ",") + "[" + std::to_string(l.number) + "," +
            json_string(l.section) + "," + json_string(l.row) + "," + json_string(l.tier) + "," +
            std::to_string(l.price_cents) + "," + std::to_string(l.view) + "]";
    first = false;
  }
  return Response{200, body + "]}"};
}

Response BoxOffice::post_order(const Request& r) {
  std::int64_t event = 0;
  std::int64_t count = 0;
  if (!number_of(r, "event", 1, 1000000000, event) || !number_of(r, "seats", 1, 8, count))
    return error_response(400, "an order needs event=ID and seats=1..8");
  const auto who = r.query.find("customer");
  if (who == r.query.end() || who->second.empty() || who->second.size() > 64)
    return error_response(400, "an order needs customer=NAME (1 to 64 characters)");
  const std::string& customer = who->second;
  EventSummary e;
  if (!summary(event, e)) return error_response(404, "no event " + std::to_string(event));
  if (fraud_ && !ask_remote(fraud_->port(), next_ref_++, customer))
    return error_response(503, "the fraud screening did not answer");

  // The planted One Lane Bridge: with --allocation-lock every order holds
  // one process-wide lock from reading the free seats through the payment
  // authorization to the commit ("no order may pay for seats another takes
  // meanwhile"), which the conditional UPDATE below already guarantees: a
  // conflict is chosen and authorized again.
  std::unique_lock serial(allocation_mutex_, std::defer_lock);
  if (o_.allocation_lock) serial.lock();
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::vector<Seat> free;
    {
      Query q = catalog_.query(
          "SELECT seat_no, section, price_cents FROM tk_seat WHERE event_id = ? AND sold = 0 ORDER "
          "BY seat_no");
      q.bind(1, event);
      while (q.step()) free.push_back({q.integer(0), q.text(1), q.integer(2)});
    }
    if (free.size() < static_cast<std::size_t>(count))
      return error_response(409, "not enough free seats");
    const std::vector<std::size_t> chosen =
        best_seats(free, static_cast<std::size_t>(count), o_.search_rounds);
    std::int64_t total = 0;
    for (std::size_t i : chosen) total += free[i].price_cents;
    // The payment is authorized before the seats are booked, outside the
    // database transaction (a remote call inside it would hold SQLite's
    // write lock for its whole latency).
    if (!ask_remote(payments_.port(), next_ref_++, customer))
      return error_response(503, "the payment authorization did not answer");

    Transaction t(catalog_);
    bool taken = false;
    for (std::size_t i : chosen) {
      catalog_.query("UPDATE tk_seat SET sold = 1 WHERE event_id = ? AND seat_no = ? AND sold = 0")
          .bind(1, event)
          .bind(2, free[i].number)
          .step();
      if (catalog_.changes() != 1) {
        taken = true;  // another order was faster: choose again
        break;
      }
    }
    if (taken) continue;  // the transaction rolls back
    catalog_
        .query(
            "INSERT INTO tk_order (event_id, customer, total_cents, created_at) VALUES (?, ?, ?, "
            "?)")
        .bind(1, event)
        .bind(2, customer)
        .bind(3, total)
        .bind(4, kToday + now_seconds() % 86400)
        .step();
    const std::int64_t order = catalog_.last_id();
    std::string seats;
    for (std::size_t i : chosen) {
      catalog_.query("INSERT INTO tk_order_item (order_id, seat_no, price_cents) VALUES (?, ?, ?)")
          .bind(1, order)
          .bind(2, free[i].number)
          .bind(3, free[i].price_cents)
          .step();
      seats += (seats.empty() ? "" : ",") + std::to_string(free[i].number);
    }
    t.commit();
    if (o_.unpruned_holds) {
      // The planted Ramp: a hold per seat, kept for ten minutes and never
      // pruned; the seat listing checks every free seat against all of them.
      const std::int64_t expires = now_seconds() + 600;
      std::unique_lock exclusive(holds_mutex_);
      for (std::size_t i : chosen) holds_.push_back({event, free[i].number, expires});
    }
    return Response{201, "{\"order\":" + std::to_string(order) +
                             ",\"event\":" + std::to_string(event) + ",\"seats\":[" + seats +
                             "],\"total_cents\":" + std::to_string(total) + "}"};
  }
  return error_response(409, "the seats were taken by other orders; try again");
}

Response BoxOffice::get_order(std::int64_t id) {
  Query q = catalog_.query(
      "SELECT event_id, customer, total_cents, created_at FROM tk_order WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) return error_response(404, "no order " + std::to_string(id));
  std::string body = "{\"order\":" + std::to_string(id) +
                     ",\"event\":" + std::to_string(q.integer(0)) +
                     ",\"customer\":" + json_string(q.text(1)) +
                     ",\"total_cents\":" + std::to_string(q.integer(2)) +
                     ",\"created_at\":" + std::to_string(q.integer(3)) + ",\"items\":[";
  Query items = catalog_.query(
      "SELECT seat_no, price_cents FROM tk_order_item WHERE order_id = ? ORDER BY seat_no");
  items.bind(1, id);
  bool first = true;
  while (items.step()) {
    body += std::string(first ? "" : ",") + "[" + std::to_string(items.integer(0)) + "," +
            std::to_string(items.integer(1)) + "]";
    first = false;
  }
  return Response{200, body + "]}"};
}

// Reviews that contain a word: through the full-text index, or with
// --review-scan by matching every review's text as a whole word (LIKE
// '% word %': a full scan).
Response BoxOffice::search(const std::string& q) {
  std::int64_t n = 0;
  std::string word;
  if (parse_id(q, n)) {
    word = vocabulary_word(n % 2000);  // the load driver names words by number
  } else if (!q.empty() && q.size() <= 32 &&
             std::all_of(q.begin(), q.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    word = q;
  } else {
    return error_response(400, "q must be a word of lower-case letters or a word number");
  }
  std::int64_t matches = 0;
  std::string body = "{\"word\":" + json_string(word) + ",\"reviews\":[";
  bool first = true;
  auto list = [&](Query& rows) {
    while (rows.step()) {
      body += std::string(first ? "" : ",") + "{\"id\":" + std::to_string(rows.integer(0)) +
              ",\"event\":" + std::to_string(rows.integer(1)) +
              ",\"text\":" + json_string(rows.text(2)) + "}";
      first = false;
    }
  };
  if (o_.review_scan) {
    Query count = catalog_.query(
        "SELECT COUNT(*) FROM tk_review WHERE ' ' || body || ' ' LIKE '% ' || ? || ' %'");
    count.bind(1, word);
    if (count.step()) matches = count.integer(0);
    Query rows = catalog_.query(
        "SELECT id, event_id, substr(body, 1, 60) FROM tk_review WHERE ' ' || body || ' ' LIKE '% "
        "' || ? || ' %'"
        " ORDER BY id DESC LIMIT 10");
    rows.bind(1, word);
    list(rows);
  } else {
    Query count =
        catalog_.query("SELECT COUNT(*) FROM tk_review_words WHERE tk_review_words MATCH ?");
    count.bind(1, word);
    if (count.step()) matches = count.integer(0);
    Query rows = catalog_.query(
        "SELECT id, event_id, substr(body, 1, 60) FROM tk_review WHERE id IN"
        " (SELECT rowid FROM tk_review_words WHERE tk_review_words MATCH ? ORDER BY rowid DESC "
        "LIMIT 10)"
        " ORDER BY id DESC");
    rows.bind(1, word);
    list(rows);
  }
  return Response{200, body + "],\"matches\":" + std::to_string(matches) + "}"};
}

// A section's price today: its base price times the demand multiplier
// (closed form, or with --price-simulation a Monte Carlo over demand paths).
Response BoxOffice::price(const Request& r) {
  std::int64_t event = 0;
  std::int64_t section = 0;
  if (!number_of(r, "event", 1, 1000000000, event) || !number_of(r, "section", 1, 5, section))
    return error_response(400, "a price needs event=ID and section=1..5");
  EventSummary e;
  if (!summary(event, e)) return error_response(404, "no event " + std::to_string(event));
  const std::string name = kSections[section - 1];
  int total = 0;
  int free = 0;
  double base = 0;
  {
    Query q = catalog_.query(
        "SELECT COUNT(*), SUM(sold = 0), AVG(s.price_cents + c.surcharge_cents) FROM tk_seat s"
        " JOIN tk_section c ON c.event_id = s.event_id AND c.section = s.section"
        " WHERE s.event_id = ? AND s.section = ?");
    q.bind(1, event).bind(2, name);
    if (!q.step()) return error_response(404, "no section " + name);
    total = static_cast<int>(q.integer(0));
    free = static_cast<int>(q.integer(1));
    base = q.real(2);
  }
  const int days = static_cast<int>((e.starts_at - kToday) / 86400);
  const double multiplier =
      o_.price_simulation ? simulated_multiplier(free, total, days, o_.price_paths,
                                                 static_cast<std::uint64_t>(event * 31 + section))
                          : demand_multiplier(free, total, days);
  return Response{200, "{\"event\":" + std::to_string(event) + ",\"section\":" + json_string(name) +
                           ",\"free\":" + std::to_string(free) +
                           ",\"base_cents\":" + std::to_string(static_cast<std::int64_t>(base)) +
                           ",\"multiplier\":" + std::to_string(multiplier) + ",\"price_cents\":" +
                           std::to_string(static_cast<std::int64_t>(base * multiplier)) + "}"};
}

Response handle_request(BoxOffice& office, const Request& r) {
  try {
    return office.handle(r);
  } catch (const std::exception& e) {
    return error_response(500, e.what());
  }
}

}  // namespace tickets
