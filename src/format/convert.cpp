#include "format/convert.hpp"

namespace sonde::format {

ConvertResult convert_log(const std::string& input, OutputFormat format, const std::string& output,
                          Compression compression) {
  ConvertResult result;
  std::unique_ptr<RecordLogWriter> out = open_record_log(format, output, compression);
  // Kieker's tools parse Kieker's signatures; a native log keeps C++ names.
  const NameForm names = format == OutputFormat::kNative ? NameForm::kCpp : NameForm::kKieker;
  result.read = read_log(input, *out, names);
  result.error = out->finish();
  result.written = out->written();
  result.strings_altered = out->strings_altered();
  return result;
}

}  // namespace sonde::format
