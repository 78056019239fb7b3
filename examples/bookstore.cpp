// Demonstrates manual C++ probes (SONDE_SCOPE) on Kieker's bookstore example:
// Bookstore::searchBook calls Catalog::getBook and CRM::getOffers, which calls
// Catalog::getBook again. Worker threads continue the main thread's trace via
// sonde::Context; a recursive function shows nested calls of one operation,
// and a thrown-and-caught exception records a failed call.
//
//   example_bookstore [threads=4] [requests=10] [depth=5]
//
// Call counts depend only on the arguments (T threads, R requests, D depth):
// Bookstore::openShop 1, serveCustomers T, Bookstore::searchBook T*R,
// CRM::getOffers T*R, Catalog::getBook 2*T*R, Bookstore::placeOrder T*R of
// which T*(R/5) fail (every 5th request), Warehouse::countShelves D+1.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sonde/sonde.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace bookstore {

class Catalog {
 public:
  // Stands in for a database lookup: a little work the compiler cannot skip.
  unsigned long getBook(bool complex_query) {
    SONDE_SCOPE();
    unsigned long hash = complex_query ? 7 : 3;
    for (int i = 0; i < 200; ++i) hash = hash * 31 + i;
    return hash;
  }
};

class CRM {
 public:
  explicit CRM(Catalog& catalog) : catalog_(catalog) {}
  unsigned long getOffers() {
    SONDE_SCOPE();
    return catalog_.getBook(false);
  }

 private:
  Catalog& catalog_;
};

class OutOfStock : public std::runtime_error {
 public:
  explicit OutOfStock(int request) : std::runtime_error("request " + std::to_string(request)) {}
};

class Bookstore {
 public:
  unsigned long searchBook() {
    SONDE_SCOPE();
    return catalog_.getBook(false) + crm_.getOffers();
  }

  // Every 5th request finds the book out of stock; the exception leaves this
  // scope, so the probe records the call as failed with the exception's text.
  void placeOrder(int request) {
    SONDE_SCOPE();
    if (request % 5 == 4) throw OutOfStock(request);
  }

  void openShop(int threads, int requests);

  unsigned long checksum() const { return checksum_.load(); }
  int failedOrders() const { return failed_.load(); }

 private:
  void serveCustomers(int requests);

  Catalog catalog_;
  CRM crm_{catalog_};
  std::atomic<unsigned long> checksum_{0};
  std::atomic<int> failed_{0};
};

void Bookstore::serveCustomers(int requests) {
  SONDE_SCOPE_NAMED("serveCustomers");
  unsigned long sum = 0;
  for (int r = 0; r < requests; ++r) {
    sum += searchBook();
    try {
      placeOrder(r);
    } catch (const OutOfStock&) {
      failed_.fetch_add(1);
    }
  }
  checksum_.fetch_add(sum);
}

void Bookstore::openShop(int threads, int requests) {
  SONDE_SCOPE();
  // Each worker's trace becomes a child of this call's trace.
  const sonde::Context ctx = sonde::Context::capture();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([this, ctx, requests] {
      ctx.continue_here();
      serveCustomers(requests);
    });
  }
  for (std::thread& w : workers) w.join();
}

class Warehouse {
 public:
  // Recursion: one call per shelf level, depth+1 nested calls in all.
  [[gnu::noinline]] int countShelves(int depth) {
    SONDE_SCOPE();
    return depth == 0 ? 1 : 1 + countShelves(depth - 1);
  }
};

}  // namespace bookstore

namespace {

int argument(int argc, char** argv, int index, int fallback) {
  if (argc <= index) return fallback;
  char* end = nullptr;
  long value = std::strtol(argv[index], &end, 10);
  if (*end != '\0' || value < 0 || value > 1000000) {
    std::fprintf(stderr, "usage: %s [threads] [requests] [depth]\n", argv[0]);
    std::exit(2);
  }
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argument(argc, argv, 1, 4);
  const int requests = argument(argc, argv, 2, 10);
  const int depth = argument(argc, argv, 3, 5);

  bookstore::Bookstore store;
  store.openShop(threads, requests);
  bookstore::Warehouse warehouse;
  const int shelves = warehouse.countShelves(depth);

  std::printf("bookstore: %d threads x %d requests, %d orders failed, %d shelves, checksum %lu\n",
              threads, requests, store.failedOrders(), shelves, store.checksum());
  return 0;
}
