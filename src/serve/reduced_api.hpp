// GET /api/reduced and /api/reduced/ID: the reduced traces `sonde collect
// --reduce` stores (one row per shape, window and connection; the store's
// reduced_query.hpp), as JSON (docs/serve.md). Parameters are validated as
// /api/traces validates its own: a bad or unknown one gives 400 naming it.
#pragma once

#include <map>
#include <string>
#include <variant>

#include "serve/api.hpp"
#include "serve/trace_query_params.hpp"
#include "store/trace_store.hpp"

namespace sonde::serve {

std::variant<store::ReducedQuery, ParamError> parse_reduced_query(const QueryParams& params);

//   /api/reduced?operation=&host=&from=&to=&min_count=&order=count|start&limit=&offset=
ApiResponse reduced_list(store::TraceStore& store, const QueryParams& params);
//   /api/reduced/ID: one reduced trace with its call positions
ApiResponse reduced_one(store::TraceStore& store, const std::string& id_text,
                        const QueryParams& params);

}  // namespace sonde::serve
