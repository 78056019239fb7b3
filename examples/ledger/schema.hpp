// The ledger's tables (created and seeded at every start) and the few
// statements whose text differs between SQLite and PostgreSQL.
#pragma once

#include "ledger.hpp"

namespace ledger {

// Drops and recreates ledger_account, ledger_transfer, ledger_posting and
// ledger_journal, then seeds o.accounts accounts and o.transfers transfers
// (two postings each), the same rows in both backends.
void create_and_seed(Store& store, const Options& o);

}  // namespace ledger
