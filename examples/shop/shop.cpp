// The shop's components and, behind their flags, the antipatterns that
// `sonde diagnose` must find. Each flag's effect is commented where it acts;
// without flags every request is quick and independent of the others.
#include "shop.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>
#include <sstream>
#include <stdexcept>

namespace shop {
namespace {

void pause_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Not instrumented: the planted CPU work calls it in its loop, and a
// monitored call per round would plant events instead of CPU time.
[[gnu::no_instrument_function]] double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Burns `ms` of this thread's CPU time. Counted on the thread's own CPU
// clock, so the demand is the same on any machine and at any hour: a
// planted CPU load measured in loop rounds took 30% longer on a slow hour
// of the test VM than on a fast one, which moved a case across its
// requirement (scenarios/README.md, tc10).
[[gnu::no_instrument_function]] void burn_cpu_ms(double ms) {
  const double until = thread_cpu_ms() + ms;
  volatile double sink = 0;
  while (thread_cpu_ms() < until)
    for (int i = 0; i < 1000; ++i) sink = sink + std::sin(i * 0.001);
}

// A basket used when a user orders with an empty cart: 8 products derived
// from the user id, so orders always have several lines.
constexpr int kDefaultBasket = 8;
constexpr int kPickSlots = 12;  // --empty-semi-trucks: messages per unit

}  // namespace

Shop::Shop(const Options& options, Database& db, MessageBus& bus)
    : options_(options), db_(db), bus_(bus) {
  // The stronger variants include the switch they strengthen.
  options_.db_lock = options_.db_lock || options_.db_lock_long;
  options_.stifle = options_.stifle || options_.stifle_prices;
  bus_.subscribe("inventory", [this](const Message& m) { on_inventory(m); });
  bus_.subscribe("notification", [this](const Message& m) { on_notification(m); });
  bus_.subscribe("hub", [this](const Message& m) { on_hub(m); });
  if (options_.hiccups || options_.rising_hiccups || options_.blurred_hiccups)
    hiccups_ = std::thread([this] { hiccup_loop(); });
}

Shop::~Shop() {
  stopping_ = true;
  if (hiccups_.joinable()) hiccups_.join();
}

// --hiccups: a periodic stop-the-world pause (as a garbage collector's):
// every request holds world() shared, the pause holds it exclusively.
// --blurred-hiccups: pauses of 1/3 to 5/3 of the length, periods of 1/2
// to 3/2 (the thesis' TC5). --rising-hiccups: a hiccup builds up in ten
// growing slices 20 ms apart, together about two pauses long (TC4: its
// small first slices delay requests less than one impulse would, so it
// takes more pause time to be a problem at the 90th percentile).
void Shop::hiccup_loop() {
  std::mt19937 random(7);
  auto around = [&](int value, int low_parts, int high_parts, int parts) {
    return std::uniform_int_distribution<int>(value * low_parts / parts,
                                              value * high_parts / parts)(random);
  };
  while (!stopping_) {
    const int period = options_.blurred_hiccups ? around(options_.hiccup_period_ms, 1, 3, 2)
                                                : options_.hiccup_period_ms;
    for (int waited = 0; waited < period && !stopping_; waited += 50) pause_ms(50);
    if (stopping_) return;
    if (options_.rising_hiccups) {
      for (int slice = 1; slice <= 10 && !stopping_; ++slice) {
        {
          std::unique_lock stop_the_world(world_);
          pause_ms(options_.hiccup_pause_ms * slice / 27);
        }
        pause_ms(20);
      }
      continue;
    }
    std::unique_lock stop_the_world(world_);
    pause_ms(options_.blurred_hiccups ? around(options_.hiccup_pause_ms, 1, 5, 3)
                                      : options_.hiccup_pause_ms);
  }
}

void Shop::request_extras() {
  if (options_.outliers) {
    thread_local std::mt19937 random(std::random_device{}());
    if (random() % 100 == 0) pause_ms(40);
  }
  // --moderate-cpu: every page takes 2 ms of CPU to render: harmless for
  // one user, a queue for the cores at many (TC23).
  if (options_.moderate_cpu) burn_cpu_ms(2.0);
  // --cpu-heavy: a CPU-intensive application (TC10). Every page takes
  // 0.5 ms of CPU and GET /recommend 6 ms more (recommend()), so that the
  // cores saturate at the scaling series' top loads and the service
  // violates its 10 ms there, while one user stays well under it.
  if (options_.cpu_heavy) burn_cpu_ms(0.5);
}

// --ramp: every view is appended to a list that is never trimmed and that
// each request scans, so response times grow with the shop's uptime.
void Shop::cart_activity(int user, int product) {
  if (!options_.ramp) return;
  std::lock_guard lock(activity_mutex_);
  for (int i = 0; i < options_.ramp_growth; ++i) activity_.emplace_back(user, product);
  // "Recently viewed" counts per category, recomputed from the whole history.
  long seen[20] = {};
  for (int category = 0; category < 20; ++category)
    for (const auto& [u, p] : activity_)
      if (u == user && p % 20 == category) ++seen[category];
  volatile long sink = seen[product % 20];
  (void)sink;
}

std::unique_lock<std::mutex> Shop::cross_bridge(const std::string& path) {
  std::unique_lock<std::mutex> bridge(bridge_, std::defer_lock);
  // --blurred-sync: only some requests pass the sync point (TC22).
  const bool crosses = options_.one_lane_bridge ||
                       (options_.blurred_sync && (path == "/product" || path == "/cart"));
  if (!crosses) return bridge;
  // --one-lane-bridge: every request passes one global lock and, holding
  // it, a slow step (an audit write to one shared device): a clear sync
  // point (the thesis' TC21) that lets one request through at a time.
  bridge.lock();
  pause_ms(3);
  return bridge;
}

std::string Shop::product(int id) {
  std::ostringstream out;
  bool found = false;
  db_.query("SELECT name, price FROM product WHERE id = ?", {std::to_string(id)},
            [&](const Row& s) {
              found = true;
              out << "{\"id\":" << id << ",\"name\":\"" << s.text(0)
                  << "\",\"price\":" << s.integer(1) << "}";
            });
  cart_activity(0, id);
  if (!found) throw std::invalid_argument("no product " + std::to_string(id));
  if (options_.many_queries) product_page_extras(id);
  return out.str();
}

// --many-queries: the product page also shows statistics of the products
// around it, each from its own statement over about 1000 rows: many
// different, moderately costly statements, none repeated, none dominant
// (TC11: the database congests without a Stifle or one expensive call).
void Shop::product_page_extras(int id) {
  static const char* const kStatements[] = {
      "SELECT count(*) FROM product WHERE id BETWEEN ? AND ? AND price > 100",
      "SELECT avg(price) FROM product WHERE id BETWEEN ? AND ?",
      "SELECT max(price) FROM product WHERE id BETWEEN ? AND ?",
      "SELECT min(price) FROM product WHERE id BETWEEN ? AND ?",
      "SELECT count(DISTINCT category) FROM product WHERE id BETWEEN ? AND ?",
      "SELECT sum(quantity) FROM stock WHERE product BETWEEN ? AND ?",
      "SELECT count(*) FROM stock WHERE product BETWEEN ? AND ? AND quantity < 10",
      "SELECT avg(quantity) FROM stock WHERE product BETWEEN ? AND ?",
      "SELECT name FROM product WHERE id BETWEEN ? AND ? ORDER BY price DESC LIMIT 5",
      "SELECT category, count(*) FROM product WHERE id BETWEEN ? AND ? GROUP BY category",
      "SELECT sum(price * 2) FROM product WHERE id BETWEEN ? AND ?",
      "SELECT count(*) FROM product WHERE id BETWEEN ? AND ? AND name LIKE 'p%'"};
  const std::vector<std::string> range = {std::to_string(std::max(1, id - 500)),
                                          std::to_string(id + 500)};
  for (const char* sql : kStatements) db_.query(sql, range, [](const Row&) {});
}

std::string Shop::search(const std::string& term) {
  std::ostringstream out;
  out << "[";
  int n = 0;
  auto row = [&](const Row& s) {
    out << (n++ ? "," : "") << "{\"id\":" << s.integer(0) << ",\"name\":\"" << s.text(1) << "\"}";
  };
  if (options_.expensive_query) {
    // --expensive-query: a substring match (full table scan) joined with
    // every product's sales (an aggregate over all order lines) and
    // ordered by an expression (temporary B-tree), per search.
    db_.query(
        "SELECT p.id, p.name FROM product p LEFT JOIN (SELECT product, sum(quantity) AS sold "
        "FROM order_line GROUP BY product) o ON o.product = p.id WHERE p.description LIKE ? "
        "ORDER BY length(p.description) * p.price * coalesce(o.sold, 1) DESC, p.name LIMIT 20",
        {"%" + term + "%"}, row);
  } else {
    db_.query("SELECT id, name FROM product WHERE category = ? ORDER BY id LIMIT 20",
              {std::to_string(std::hash<std::string>{}(term) % 20)}, row);
  }
  out << "]";
  return out.str();
}

std::string Shop::add_to_cart(int user, int product, int quantity) {
  if (quantity <= 0) throw std::invalid_argument("quantity must be positive");
  {
    std::lock_guard lock(carts_mutex_);
    carts_[user][product] += quantity;
  }
  cart_activity(user, product);
  const std::vector<std::string> reserve{std::to_string(quantity), std::to_string(product)};
  if (options_.db_lock) {
    // --db-lock: the reservation takes the database's write lock first and
    // keeps it while it reads the stock back and works 2 ms (--db-lock-long:
    // 4 ms), so concurrent carts queue on the database lock. (It counted the product's sales
    // once: a scan of order_line, which grows with every order, so the
    // switch injected a Ramp too; scenario tc15.)
    db_.begin_locking("stock");
    Transaction reservation(db_);
    db_.query("UPDATE stock SET quantity = quantity - ? WHERE product = ?", reserve);
    db_.query("SELECT quantity FROM stock WHERE product = ?", {std::to_string(product)});
    pause_ms(options_.db_lock_long ? 4 : 2);
    reservation.commit();
  } else {
    db_.query("UPDATE stock SET quantity = quantity - ? WHERE product = ?", reserve);
  }
  return "{\"user\":" + std::to_string(user) + ",\"product\":" + std::to_string(product) + "}";
}

// Messages go straight to their component, or with --blob through the hub.
void Shop::route(const std::string& from, const std::string& destination, std::string body) {
  // --blurred-blob: the orders' messages pass the hub too, but other
  // components also talk peer to peer (on_inventory; TC18).
  if (options_.blob || options_.blurred_blob)
    bus_.send(from, "hub", destination + "|" + body);
  else
    bus_.send(from, destination, std::move(body));
}

// --blob: one component that every message passes through; it parses,
// audits and forwards each message on its single consumer thread.
void Shop::on_hub(const Message& message) {
  const auto bar = message.body.find('|');
  if (bar == std::string::npos) return;
  std::string audit;
  for (int i = 0; i < 200; ++i) audit += message.body.substr(0, bar);
  pause_ms(6);
  bus_.send("hub", message.body.substr(0, bar), message.body.substr(bar + 1));
}

// Inventory: "product:quantity;product:quantity;..." -> stock updates.
void Shop::on_inventory(const Message& message) {
  // "product:quantity;..." -> one UPDATE for all of them:
  // quantity - CASE product WHEN p1 THEN q1 ... END WHERE product IN (p1, ...).
  // --stifle: row by row instead, one UPDATE per product (see place_order).
  std::istringstream in(message.body);
  std::string item, cases, in_list;
  std::vector<std::string> when, products;
  const bool row_by_row = options_.stifle || options_.stifle_similar;
  while (std::getline(in, item, ';')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) continue;
    if (row_by_row) {
      db_.query("UPDATE stock SET quantity = quantity - ? WHERE product = ?",
                {item.substr(colon + 1), item.substr(0, colon)});
      continue;
    }
    cases += " WHEN ? THEN CAST(? AS INTEGER)";
    in_list += products.empty() ? "?" : ", ?";
    when.insert(when.end(), {item.substr(0, colon), item.substr(colon + 1)});
    products.push_back(item.substr(0, colon));
  }
  if (!products.empty()) {
    when.insert(when.end(), products.begin(), products.end());
    db_.query("UPDATE stock SET quantity = quantity - CASE product" + cases +
                  " END WHERE product IN (" + in_list + ")",
              when);
  }
  // --blurred-blob: the stock change goes straight to notification, past the hub.
  if (options_.blurred_blob) bus_.send("inventory", "notification", "stock " + message.body);
}

void Shop::on_notification(const Message&) { ++notifications_; }

std::string Shop::place_order(int user) {
  std::map<int, int> lines;
  {
    std::lock_guard lock(carts_mutex_);
    lines.swap(carts_[user]);
  }
  if (lines.empty())
    for (int i = 0; i < kDefaultBasket; ++i)
      lines[1 + (user * 31 + i * 7) % options_.products] += 1;
  long long order_id = 0;
  db_.begin_write();
  Transaction order(db_);
  db_.query("INSERT INTO orders (customer, total) VALUES (?, 0) RETURNING id",
            {std::to_string(user)}, [&](const Row& s) { order_id = s.integer(0); });
  // All lines in one statement (one per line would be a small Stifle of
  // the shop's own, found on PostgreSQL in every scenario). --stifle talks
  // to the database row by row, writes too: one INSERT per line. Its
  // writes are what congests the database under load, as in the thesis'
  // TC12/13 (before 2026-11-27 every order did this, and POST /order
  // violated at 12 users in tc13; without them GET /orders alone violated,
  // at every load, so there was no Traffic Jam to reach the Stifle through).
  if (options_.stifle || options_.stifle_similar) {
    for (const auto& [product, quantity] : lines)
      db_.query("INSERT INTO order_line (order_id, product, quantity) VALUES (?, ?, ?)",
                {std::to_string(order_id), std::to_string(product), std::to_string(quantity)});
  } else {
    std::string insert = "INSERT INTO order_line (order_id, product, quantity) VALUES ";
    std::vector<std::string> values;
    for (const auto& [product, quantity] : lines) {
      insert += values.empty() ? "(?, ?, ?)" : ", (?, ?, ?)";
      values.insert(values.end(),
                    {std::to_string(order_id), std::to_string(product), std::to_string(quantity)});
    }
    db_.query(insert, values);
  }
  order.commit();
  ++orders_;

  if (options_.empty_semi_trucks) {
    // --empty-semi-trucks: the stock reservation in tiny messages, one per
    // unit and per pick slot of each order line (kPickSlots), sent in a
    // loop, instead of one message carrying the whole order.
    for (const auto& [product, quantity] : lines)
      for (int unit = 0; unit < quantity * kPickSlots; ++unit)
        route("orders", "inventory", std::to_string(product) + (unit % kPickSlots ? ":0" : ":1"));
  } else if (options_.cascading_loop) {
    // --cascading-loop: the same tiny messages, but the loop calls a
    // helper that calls another that sends: the send sits two calls below
    // the loop (TC20).
    for (const auto& [product, quantity] : lines)
      for (int unit = 0; unit < quantity * kPickSlots; ++unit)
        reserve_unit(product, unit % kPickSlots == 0);
  } else {
    std::string batch;
    for (const auto& [product, quantity] : lines)
      batch += std::to_string(product) + ":" + std::to_string(quantity) + ";";
    route("orders", "inventory", batch);
  }
  // --excessive-messaging: a status update per step of a fine-grained
  // workflow, each carrying the whole order, instead of one notification.
  const int notifications = options_.excessive_messaging ? 60 : 1;
  const std::string payload(options_.excessive_messaging ? 2048 : 64, 'n');
  for (int i = 0; i < notifications; ++i)
    route("orders", "notification",
          "order " + std::to_string(order_id) + " step " + std::to_string(i) + " " + payload);
  return "{\"order\":" + std::to_string(order_id) + ",\"lines\":" + std::to_string(lines.size()) +
         "}";
}

__attribute__((noinline)) void Shop::reserve_unit(int product, bool counted) {
  send_reservation(std::to_string(product) + (counted ? ":1" : ":0"));
}

__attribute__((noinline)) void Shop::send_reservation(const std::string& item) {
  route("orders", "inventory", item);
}

std::string Shop::order_history(int user) {
  std::ostringstream out;
  out << "[";
  int n = 0;
  if (options_.stifle_similar) {
    // --stifle-similar: the same N+1 queries with each key written into
    // the statement: every statement's text differs, their structure is
    // the same (TC13: the Stifle must cluster statements by structure).
    std::vector<long long> order_ids;
    db_.query("SELECT id FROM orders WHERE customer = " + std::to_string(user) +
                  " ORDER BY id DESC LIMIT 50",
              {}, [&](const Row& s) { order_ids.push_back(s.integer(0)); });
    for (long long id : order_ids) {
      std::vector<int> products;
      db_.query("SELECT product FROM order_line WHERE order_id = " + std::to_string(id), {},
                [&](const Row& s) { products.push_back(s.integer(0)); });
      for (int p : products)
        db_.query("SELECT name FROM product WHERE id = " + std::to_string(p), {},
                  [&](const Row& s) {
                    out << (n++ ? "," : "") << "{\"order\":" << id << ",\"name\":\"" << s.text(0)
                        << "\"}";
                  });
    }
  } else if (options_.stifle) {
    // --stifle: N+1 queries: the orders, then each order's lines, then
    // each line's product name, one statement per row (--stifle-prices:
    // and then its price, one more statement per row).
    std::vector<long long> order_ids;
    db_.query("SELECT id FROM orders WHERE customer = ? ORDER BY id DESC LIMIT 50",
              {std::to_string(user)}, [&](const Row& s) { order_ids.push_back(s.integer(0)); });
    for (long long id : order_ids) {
      std::vector<int> products;
      db_.query("SELECT product FROM order_line WHERE order_id = ?", {std::to_string(id)},
                [&](const Row& s) { products.push_back(s.integer(0)); });
      for (int p : products) {
        bool listed = false;  // a line whose product is gone lists nothing
        db_.query("SELECT name FROM product WHERE id = ?", {std::to_string(p)}, [&](const Row& s) {
          out << (n++ ? "," : "") << "{\"order\":" << id << ",\"name\":\"" << s.text(0) << "\"";
          listed = true;
        });
        if (!listed) continue;
        if (options_.stifle_prices)
          db_.query("SELECT price FROM product WHERE id = ?", {std::to_string(p)},
                    [&](const Row& s) { out << ",\"price\":" << s.integer(0); });
        out << "}";
      }
    }
  } else {
    db_.query(
        "SELECT o.id, p.name FROM (SELECT id FROM orders WHERE customer = ? ORDER BY id DESC LIMIT "
        "50) "
        "o "
        "JOIN order_line l ON l.order_id = o.id JOIN product p ON p.id = l.product",
        {std::to_string(user)}, [&](const Row& s) {
          out << (n++ ? "," : "") << "{\"order\":" << s.integer(0) << ",\"name\":\"" << s.text(1)
              << "\"}";
        });
  }
  out << "]";
  return out.str();
}

std::string Shop::shipping_quote(int product) {
  // --slow-external: the quote comes from a (simulated) carrier service
  // that answers after a fixed delay, independent of the shop's load.
  // --varying-external: the carrier's delay varies widely around it (TC9).
  if (options_.varying_external) {
    thread_local std::mt19937 random(std::random_device{}());
    const int d = options_.external_delay_ms;
    pause_ms(d <= 5 ? d : std::uniform_int_distribution<int>(5, 2 * d - 5)(random));
  } else if (options_.slow_external) {
    pause_ms(options_.external_delay_ms);
  }
  return "{\"product\":" + std::to_string(product) +
         ",\"shipping\":" + std::to_string(300 + product % 200) + "}";
}

std::string Shop::recommend(int product) {
  std::vector<int> similar;
  db_.query(
      "SELECT id FROM product WHERE category = (SELECT category FROM product WHERE id = ?) LIMIT "
      "50",
      {std::to_string(product)}, [&](const Row& s) { similar.push_back(s.integer(0)); });
  double best = -1;
  int pick = similar.empty() ? product : similar.front();
  for (int candidate : similar) {
    double score = 0;
    for (int r = 0; r < 20; ++r)
      score += std::sin(candidate * 0.001 + r) * std::cos(product * 0.002 - r);
    if (score > best) best = score, pick = candidate;
  }
  // --cpu-heavy: a costly numeric model refines the scores, 6 ms of CPU
  // (loop rounds took 4.9-7.6 ms from hour to hour on the test VM).
  if (options_.cpu_heavy) burn_cpu_ms(6.0);
  return "{\"product\":" + std::to_string(product) + ",\"recommended\":" + std::to_string(pick) +
         "}";
}

std::string Shop::stats() {
  std::size_t activity;
  {
    std::lock_guard lock(activity_mutex_);
    activity = activity_.size();
  }
  return "{\"orders\":" + std::to_string(orders_.load()) +
         ",\"notifications\":" + std::to_string(notifications_.load()) +
         ",\"messages_delivered\":" + std::to_string(bus_.delivered()) +
         ",\"messages_failed\":" + std::to_string(bus_.failed()) +
         ",\"activity\":" + std::to_string(activity) + "}";
}

}  // namespace shop
