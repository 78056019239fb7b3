// `sonde convert IN OUT --to FORMAT`: converts a log between formats.
//   native, kieker-dat, kieker-bin   record formats: every record is carried over
//   openxtrace, chrome, otlp,        trace formats: traces are reconstructed and
//   perfetto                         stitched across threads/processes first
// OUT may also be given as --out. Exit status: 0 ok; 1 the input cannot be
// read or the output cannot be written (the message names which); 2 usage.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "analysis/export/trace_export.hpp"
#include "cli/command.hpp"
#include "format/convert.hpp"

namespace sonde::cli {
namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string output_option;
  std::string to;
  std::string compression = "none";
  bool repair = false;
};

void print_read_messages(const format::LogReadStats& read) {
  for (const std::string& w : read.warnings) std::cerr << "sonde convert: warning: " << w << "\n";
  for (const std::string& e : read.errors) std::cerr << "sonde convert: error: " << e << "\n";
}

int convert_records(const ConvertOptions& o, const std::string& output,
                    format::OutputFormat format) {
  format::Compression compression = format::Compression::kNone;
  if (!format::parse_compression(o.compression, &compression)) {
    std::cerr << "sonde convert: unknown --compression '" << o.compression
              << "' (none, gzip, zlib, xz, bzip2 or zip)\n";
    return kUsage;
  }
  if (compression != format::Compression::kNone && format == format::OutputFormat::kNative) {
    std::cerr << "sonde convert: --compression is for Kieker outputs (native logs are always "
                 "compressed)\n";
    return kUsage;
  }
  const format::ConvertResult r = format::convert_log(o.input, format, output, compression);
  print_read_messages(r.read);
  if (!r.error.empty()) std::cerr << "sonde convert: error: " << r.error << "\n";
  std::cerr << "sonde convert: " << r.written << " records written to " << output;
  if (r.strings_altered != 0) {
    std::cerr << " (" << r.strings_altered << " strings had ';', CR or LF replaced for .dat)";
  }
  std::cerr << "\n";
  return r.ok() ? kOk : kFailed;
}

int convert_traces(const ConvertOptions& o, const std::string& output,
                   analysis::TraceFormat format) {
  analysis::TraceExportOptions options;
  options.reconstruction.repair_event_traces = o.repair;
  const auto started = std::chrono::steady_clock::now();
  const analysis::TraceExportResult r = analysis::export_traces(o.input, format, output, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print_read_messages(r.read);
  if (!r.error.empty()) std::cerr << "sonde convert: error: " << r.error << "\n";
  std::cerr << "sonde convert: " << r.traces << " traces (";
  if (format == analysis::TraceFormat::kOpenXtrace) {
    std::cerr << r.callables << " callables";
  } else {
    std::cerr << r.executions << " executions";
  }
  if (r.stitched_parts > 0) std::cerr << ", " << r.stitched_parts << " continued parts stitched";
  if (r.counter_values > 0) std::cerr << ", " << r.counter_values << " sampler values";
  if (r.loss_markers > 0) std::cerr << ", " << r.loss_markers << " lost-event markers";
  std::cerr << ") written to " << output;
  // The rate, for converting logs of 10^8 events: records read per second.
  if (seconds > 0 && r.read.records > 0) {
    char rate[64];
    std::snprintf(rate, sizeof rate, " in %.1f s (%.2f M records/s)", seconds,
                  static_cast<double>(r.read.records) / seconds / 1e6);
    std::cerr << rate;
  }
  std::cerr << "\n";
  if (r.callable_records_dropped > 0) {
    std::cerr << "sonde convert: warning: " << r.callable_records_dropped
              << " callable records (SQL, HTTP, exceptions, ...) had no exported trace to go to\n";
  }
  if (r.invalid_traces > 0) {
    std::cerr << "sonde convert: warning: " << r.invalid_traces
              << " invalid traces were not exported (see `sonde traces --invalid`)\n";
  }
  return r.ok() ? kOk : kFailed;
}

int run_convert(const ConvertOptions& o) {
  if (o.input.empty()) {
    std::cerr << "sonde convert: missing the input log\n";
    return kUsage;
  }
  if (!o.output.empty() && !o.output_option.empty() && o.output != o.output_option) {
    std::cerr << "sonde convert: two outputs given ('" << o.output << "' and --out '"
              << o.output_option << "')\n";
    return kUsage;
  }
  const std::string output = o.output.empty() ? o.output_option : o.output;
  if (output.empty()) {
    std::cerr << "sonde convert: missing the output (OUT or --out)\n";
    return kUsage;
  }
  if (o.to == "native") return convert_records(o, output, format::OutputFormat::kNative);
  if (o.to == "kieker-dat") return convert_records(o, output, format::OutputFormat::kKiekerDat);
  if (o.to == "kieker-bin") return convert_records(o, output, format::OutputFormat::kKiekerBin);
  analysis::TraceFormat trace_format;
  if (!analysis::parse_trace_format(o.to, &trace_format)) {
    std::cerr << "sonde convert: unknown --to '" << o.to
              << "' (native, kieker-dat, kieker-bin, openxtrace, chrome, otlp or perfetto)\n";
    return kUsage;
  }
  return convert_traces(o, output, trace_format);
}

void setup_convert(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ConvertOptions>();
  // Validation happens in run_convert so that every usage error exits with 2.
  app.add_option("input", o->input, "Log to read: native, Kieker directory, OPEN.xtrace JSON")
      ->type_name("IN");
  app.add_option("output", o->output,
                 "Output: a .sonde file, a new Kieker directory, or a JSON file")
      ->type_name("OUT");
  app.add_option("--out,-o", o->output_option, "Output (instead of the OUT argument)")
      ->type_name("OUT");
  app.add_option("--to", o->to,
                 "native, kieker-dat, kieker-bin, openxtrace, chrome, otlp or perfetto")
      ->type_name("FORMAT");
  app.add_option("--compression", o->compression,
                 "Kieker outputs: none (default), gzip, zlib, xz, bzip2 or zip per data file")
      ->type_name("NAME");
  app.add_flag("--repair", o->repair,
               "Trace formats: synthesise missing after events before exporting");
  app.footer("Exit status: 0 ok, 1 input unreadable or output not writable, 2 usage error.");
  app.callback([o, &exit_code] { exit_code = run_convert(*o); });
}

}  // namespace

SONDE_COMMAND("convert",
              "Convert a log between formats (Kieker, native, OPEN.xtrace, Chrome, OTLP)",
              setup_convert);

}  // namespace sonde::cli
