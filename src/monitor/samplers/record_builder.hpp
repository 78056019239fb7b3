// Fills a format::Record by field name. Samplers set fields by the names of
// Kieker's record classes rather than by position, and each value is converted
// to the type the schema declares; so a schema that orders its fields
// differently, or declares `long` where sonde computes a double, still gets
// every value, and a field it does not have is simply left out.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "format/record.hpp"
#include "format/schema.hpp"

namespace sonde::monitor::samplers {

class RecordBuilder {
 public:
  // Starts from the schema's defaults (0, 0.0, "", false).
  explicit RecordBuilder(const format::RecordSchema* schema);

  RecordBuilder& set_int(std::string_view field, int64_t v);
  RecordBuilder& set_double(std::string_view field, double v);
  // `v` must outlive the record (interned by the sampler).
  RecordBuilder& set_string(std::string_view field, std::string_view v);

  format::Record take() { return std::move(record_); }

 private:
  format::Record record_;
};

}  // namespace sonde::monitor::samplers
