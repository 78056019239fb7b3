#include "schema.hpp"

namespace ledger {

void create_and_seed(Store& store, const Options& o) {
  const bool pg = store.is_postgres();
  const std::string id = pg ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY";
  const std::string integer = pg ? "BIGINT" : "INTEGER";
  store.exec("DROP TABLE IF EXISTS ledger_journal");
  store.exec("DROP TABLE IF EXISTS ledger_posting");
  store.exec("DROP TABLE IF EXISTS ledger_transfer");
  store.exec("DROP TABLE IF EXISTS ledger_account");
  store.exec("CREATE TABLE ledger_account (id " + id +
             ", owner TEXT NOT NULL, currency TEXT NOT NULL, balance_cents " + integer +
             " NOT NULL)");
  store.exec("CREATE TABLE ledger_transfer (id " + id + ", from_account " + integer +
             " NOT NULL, to_account " + integer + " NOT NULL, amount_cents " + integer +
             " NOT NULL, invoice " + integer + " NOT NULL, memo TEXT NOT NULL, created_at " +
             integer + " NOT NULL)");
  store.exec("CREATE TABLE ledger_posting (id " + id + ", transfer_id " + integer +
             " NOT NULL, account_id " + integer + " NOT NULL, delta_cents " + integer +
             " NOT NULL)");
  // Every request is journaled (replay protection); entry is its JSON.
  store.exec("CREATE TABLE ledger_journal (id " + id +
             ", request_key TEXT NOT NULL, entry TEXT NOT NULL)");

  const std::string accounts = std::to_string(o.accounts);
  const std::string transfers = std::to_string(o.transfers);
  // Row numbers 1..N: a recursive CTE in both dialects (SQLite has no
  // generate_series by default).
  auto numbers = [](const std::string& n) {
    return "WITH RECURSIVE n(i) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i "
           "< " +
           n + ") ";
  };
  store.exec("BEGIN");
  store.exec("INSERT INTO ledger_account (owner, currency, balance_cents) " + numbers(accounts) +
             "SELECT 'owner ' || i, CASE i % 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'CHF' "
             "END, 10000000 FROM n");
  // from and to differ: to is from moved on by s in 1..accounts-1, wrapped.
  store.exec(
      "INSERT INTO ledger_transfer (from_account, to_account, amount_cents, invoice, memo, "
      "created_at) " +
      numbers(transfers) + "SELECT f, (f - 1 + s) % " + accounts +
      " + 1, a, inv, 'invoice ' || inv || ' ' || "
      "CASE i % 5 WHEN 0 THEN 'rent' WHEN 1 THEN 'groceries' WHEN 2 THEN 'salary' "
      "WHEN 3 THEN 'utilities' ELSE 'transfer between own accounts' END, i FROM ("
      "SELECT i, (i * 7919) % " +
      accounts + " + 1 AS f, (i * 7) % (" + accounts +
      " - 1) + 1 AS s, (i * 37) % 50000 + 100 AS a, (i * 13) % 997 + 1 AS inv FROM n) "
      "AS seed");
  store.exec(
      "INSERT INTO ledger_posting (transfer_id, account_id, delta_cents) "
      "SELECT id, account_id, delta FROM (SELECT id, from_account AS account_id, -amount_cents "
      "AS delta FROM ledger_transfer UNION ALL SELECT id, to_account, amount_cents FROM "
      "ledger_transfer) AS p ORDER BY id");
  store.exec("COMMIT");
  store.exec("CREATE INDEX ledger_posting_account ON ledger_posting (account_id, id)");
  store.exec("CREATE INDEX ledger_transfer_invoice ON ledger_transfer (invoice, id)");
  store.exec("CREATE INDEX ledger_journal_key ON ledger_journal (request_key)");
  if (pg) store.exec("ANALYZE");
}

}  // namespace ledger
