#include "analysis/kieker/kieker_system_model.hpp"

#include "analysis/model/operation_signature.hpp"

namespace sonde::analysis {

int32_t KiekerSystemModel::find_or_add(NameIndex& index, std::vector<std::string>& names,
                                       std::string_view name) {
  auto it = index.find(name);
  if (it != index.end()) return it->second;
  names.emplace_back(name);
  const auto id = static_cast<int32_t>(names.size());  // ids start at 1, after 'Entry'
  index.emplace(names.back(), id);
  return id;
}

int32_t KiekerSystemModel::find_or_add_pair(std::unordered_map<uint64_t, int32_t>& index,
                                            std::vector<Pair>& pairs, int32_t component,
                                            int32_t operation) {
  auto [it, inserted] =
      index.try_emplace(key_of(component, operation), static_cast<int32_t>(pairs.size() + 1));
  if (inserted) pairs.push_back({component, operation});
  return it->second;
}

KiekerEntityIds KiekerSystemModel::add(std::string_view host, std::string_view component,
                                       std::string_view operation) {
  // Each kind has its own counter, so the order of these calls does not
  // matter; only the order of executions does.
  KiekerEntityIds ids;
  ids.assembly = find_or_add(type_index_, types_, component);
  ids.container = find_or_add(container_index_, containers_, host);
  auto [it, inserted] = allocation_index_.try_emplace(
      key_of(ids.container, ids.assembly), static_cast<int32_t>(allocations_.size() + 1));
  if (inserted) allocations_.push_back({ids.assembly, ids.container});
  ids.allocation = it->second;
  ids.operation = find_or_add(operation_index_, operations_, operation);
  if (operation_types_.size() < operations_.size()) operation_types_.push_back(ids.assembly);
  return ids;
}

int32_t KiekerSystemModel::assembly_pair(int32_t assembly, int32_t operation) {
  return find_or_add_pair(assembly_pair_index_, assembly_pairs_, assembly, operation);
}

int32_t KiekerSystemModel::allocation_pair(int32_t allocation, int32_t operation) {
  return find_or_add_pair(allocation_pair_index_, allocation_pairs_, allocation, operation);
}

const std::string& KiekerSystemModel::container_name(int32_t container) const {
  return containers_.at(static_cast<size_t>(container - 1));
}

const std::string& KiekerSystemModel::component_type(int32_t assembly) const {
  return types_.at(static_cast<size_t>(assembly - 1));
}

int32_t KiekerSystemModel::allocation_assembly(int32_t allocation) const {
  return allocations_.at(static_cast<size_t>(allocation - 1)).assembly;
}

int32_t KiekerSystemModel::allocation_container(int32_t allocation) const {
  return allocations_.at(static_cast<size_t>(allocation - 1)).container;
}

const std::string& KiekerSystemModel::operation_signature(int32_t operation) const {
  return operations_.at(static_cast<size_t>(operation - 1));
}

int32_t KiekerSystemModel::operation_type(int32_t operation) const {
  return operation_types_.at(static_cast<size_t>(operation - 1));
}

KiekerEntityIds KiekerSystemModel::assembly_pair_entities(int32_t pair) const {
  const Pair& p = assembly_pairs_.at(static_cast<size_t>(pair - 1));
  KiekerEntityIds ids;
  ids.assembly = p.component;
  ids.operation = p.operation;
  return ids;
}

KiekerEntityIds KiekerSystemModel::allocation_pair_entities(int32_t pair) const {
  const Pair& p = allocation_pairs_.at(static_cast<size_t>(pair - 1));
  KiekerEntityIds ids;
  ids.allocation = p.component;
  ids.assembly = allocation_assembly(p.component);
  ids.container = allocation_container(p.component);
  ids.operation = p.operation;
  return ids;
}

std::string kieker_component_label(const KiekerSystemModel& model, int32_t assembly,
                                   bool short_labels) {
  const std::string& type = model.component_type(assembly);
  std::string label = "@" + std::to_string(assembly) + ":";
  if (short_labels) {
    label += "..";
    label += short_class_label(type);
  } else {
    label += type;
  }
  return label;
}

std::string kieker_operation_label(std::string_view signature) {
  const SignatureParts parts = split_operation_signature(signature);
  return std::string(parts.name) + (parts.parameters.empty() ? "()" : "(..)");
}

std::string kieker_operation_name(std::string_view signature) {
  return std::string(split_operation_signature(signature).name);
}

}  // namespace sonde::analysis
