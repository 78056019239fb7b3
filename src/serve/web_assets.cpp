#include "serve/web_assets.hpp"

namespace sonde::serve {
namespace {

std::string_view content_type_of(std::string_view name) {
  auto ends_with = [name](std::string_view ext) { return name.ends_with(ext); };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace

std::optional<Asset> find_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  if (!path.starts_with('/')) return std::nullopt;
  path.remove_prefix(1);
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.name == path) return Asset{f.data, content_type_of(f.name)};
  }
  return std::nullopt;
}

}  // namespace sonde::serve
