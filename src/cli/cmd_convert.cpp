// `sonde convert IN --to native|kieker-dat|kieker-bin --out OUT`.
#include <iostream>

#include "cli/command.hpp"
#include "format/convert.hpp"

namespace sonde::cli {
namespace {

struct ConvertOptions {
  std::string input;
  std::string to;
  std::string output;
};

int run_convert(const ConvertOptions& o) {
  format::OutputFormat f = o.to == "native"       ? format::OutputFormat::kNative
                           : o.to == "kieker-bin" ? format::OutputFormat::kKiekerBin
                                                  : format::OutputFormat::kKiekerDat;
  format::ConvertResult r = format::convert_log(o.input, f, o.output);
  for (const std::string& w : r.read.warnings) std::cerr << "warning: " << w << "\n";
  for (const std::string& e : r.read.errors) std::cerr << "error: " << e << "\n";
  if (!r.error.empty()) std::cerr << "error: " << r.error << "\n";
  std::cerr << "sonde convert: " << r.written << " records written to " << o.output;
  if (r.strings_altered != 0) {
    std::cerr << " (" << r.strings_altered << " strings had ';', CR or LF replaced for .dat)";
  }
  std::cerr << "\n";
  return r.ok() ? 0 : 1;
}

}  // namespace

SONDE_COMMAND("convert", "Convert a log between sonde's native format and Kieker's dat/bin",
              [](CLI::App& app, int& exit_code) {
                auto o = std::make_shared<ConvertOptions>();
                app.add_option("input", o->input,
                               "log to read (native file or directory, Kieker directory)")
                    ->required();
                app.add_option("--to", o->to, "output format")
                    ->required()
                    ->check(CLI::IsMember({"native", "kieker-dat", "kieker-bin"}));
                app.add_option("--out,-o", o->output,
                               "output: a .sonde file (native) or a new directory (Kieker)")
                    ->required();
                app.callback([o, &exit_code] { exit_code = run_convert(*o); });
              });

}  // namespace sonde::cli
