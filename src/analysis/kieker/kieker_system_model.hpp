// Kieker's system model, reduced to what its trace-analysis prints: the
// numbers it gives execution containers (hosts), assembly components (one
// per component type), allocation components (an assembly component on one
// host) and operations. Kieker numbers each kind 1, 2, 3, ... in the order
// it first meets them; 0 is the virtual 'Entry'. Those numbers show up in
// every output ("SRV0::@3:bookstoreTracing.Bookstore", "O4", "depNode_2"),
// so sonde must register entities in Kieker's order to print the same text:
// OperationExecutionRecords in log order (kieker_record_filter.hpp), flow
// traces when they complete, callees before callers (kieker_trace.hpp).
//
// Kieker also numbers "pairs" (component + operation) for the operation
// dependency graphs and call trees, in the order calls first reach them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sonde::analysis {

// The id of 'Entry' in every numbering (container, component, operation, pair).
inline constexpr int32_t kKiekerRootId = 0;

struct KiekerEntityIds {
  int32_t container = kKiekerRootId;
  int32_t assembly = kKiekerRootId;    // assembly component = component type
  int32_t allocation = kKiekerRootId;  // assembly component deployed on a container
  int32_t operation = kKiekerRootId;
};

class KiekerSystemModel {
 public:
  // Finds or registers the entities of one execution. `component` is the
  // component type's fully qualified name, `operation` the full signature.
  KiekerEntityIds add(std::string_view host, std::string_view component,
                      std::string_view operation);
  // Finds or numbers the pair of a component and an operation.
  int32_t assembly_pair(int32_t assembly, int32_t operation);
  int32_t allocation_pair(int32_t allocation, int32_t operation);

  // Lookups by id (ids handed out by this model; not kKiekerRootId).
  const std::string& container_name(int32_t container) const;
  const std::string& component_type(int32_t assembly) const;  // fully qualified
  int32_t allocation_assembly(int32_t allocation) const;
  int32_t allocation_container(int32_t allocation) const;
  const std::string& operation_signature(int32_t operation) const;
  // The component type an operation was first seen on (Kieker files it there).
  int32_t operation_type(int32_t operation) const;
  // The (component, operation) a pair stands for.
  KiekerEntityIds assembly_pair_entities(int32_t pair) const;
  KiekerEntityIds allocation_pair_entities(int32_t pair) const;

  size_t containers() const { return containers_.size(); }
  size_t assemblies() const { return types_.size(); }
  size_t allocations() const { return allocations_.size(); }
  size_t operations() const { return operations_.size(); }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>()(s);
    }
  };
  using NameIndex = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;
  struct Allocation {
    int32_t assembly;
    int32_t container;
  };
  struct Pair {
    int32_t component;  // assembly or allocation id
    int32_t operation;
  };

  static int32_t find_or_add(NameIndex& index, std::vector<std::string>& names,
                             std::string_view name);
  static int32_t find_or_add_pair(std::unordered_map<uint64_t, int32_t>& index,
                                  std::vector<Pair>& pairs, int32_t component, int32_t operation);
  static uint64_t key_of(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::vector<std::string> containers_;  // [id - 1]
  std::vector<std::string> types_;
  std::vector<std::string> operations_;
  std::vector<int32_t> operation_types_;  // [operation id - 1] -> assembly id
  std::vector<Allocation> allocations_;
  NameIndex container_index_, type_index_, operation_index_;
  std::unordered_map<uint64_t, int32_t> allocation_index_;
  std::vector<Pair> assembly_pairs_, allocation_pairs_;
  std::unordered_map<uint64_t, int32_t> assembly_pair_index_, allocation_pair_index_;
};

// Labels as Kieker writes them.
//
// "@3:..Bookstore" (short) or "@3:bookstoreTracing.Bookstore".
std::string kieker_component_label(const KiekerSystemModel& model, int32_t assembly,
                                   bool short_labels);
// "searchBook()" or "getBook(..)": Kieker never prints parameter types.
std::string kieker_operation_label(std::string_view signature);
// "getBook": the bare operation name.
std::string kieker_operation_name(std::string_view signature);

}  // namespace sonde::analysis
