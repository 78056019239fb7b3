// The browser UI's files, compiled into the binary (embed_assets.cmake):
// the server answers a request for an asset from memory, by exact name, so
// no request path can ever reach the file system.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace sonde::serve {

struct EmbeddedFile {
  std::string_view name;  // e.g. "app.js"
  std::string_view data;
};

// Every embedded file (generated).
const std::vector<EmbeddedFile>& embedded_files();

struct Asset {
  std::string_view data;
  std::string_view content_type;
};

// The asset served at URL path `path` ("/" is index.html), or nothing.
std::optional<Asset> find_asset(std::string_view path);

}  // namespace sonde::serve
