// Counts in large JSON exports, read with a streaming (SAX) parser in a file
// compiled with optimization (tests/cli/CMakeLists.txt): the deep-trace test
// checks exports of 100,000 executions (24-64 MB of JSON), and building
// them as documents in the -O0 test driver took most of its 16 s.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace sonde::test {

// Objects that are elements of an array held by the key `array_key`, at any
// depth, and that have the key `key` with the string value `value` (any
// value when `value` is empty). `lines`: the file holds one JSON document
// per line (JSON lines); otherwise one document. Throws
// std::runtime_error naming the file when it is not valid JSON.
size_t count_json_elements(const std::filesystem::path& file, const std::string& array_key,
                           const std::string& key, const std::string& value, bool lines);

}  // namespace sonde::test
