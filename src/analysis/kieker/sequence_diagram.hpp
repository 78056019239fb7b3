// A trace's sequence diagram, independent of how it is drawn: participants
// (Kieker's lifelines: assembly components, or components on a host) and
// the messages between them. The pic writer (sequence_diagram_pic.hpp)
// prints it as Kieker does; the SVG writer (sequence_diagram_svg.hpp) draws
// it directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/kieker/kieker_trace.hpp"
#include "analysis/model/operation_key.hpp"

namespace sonde::analysis {

struct SequenceParticipant {
  int32_t id = kKiekerRootId;  // Kieker's component id; 0 = the 'Entry' actor
  std::string host;            // "SRV0::" on the deployment level, else ""
  std::string component;       // "@3:..Bookstore"; "" for the actor
};

struct SequenceMessage {
  bool call = true;
  size_t from = 0;    // index into participants
  size_t to = 0;      // index into participants
  std::string label;  // "getBook(..)" for calls, "" for replies
};

struct SequenceDiagram {
  int64_t trace_id = 0;
  // participants[0] is the actor; the others in order of first appearance.
  std::vector<SequenceParticipant> participants;
  std::vector<SequenceMessage> messages;
};

SequenceDiagram sequence_diagram(const KiekerTrace& trace, const KiekerSystemModel& model,
                                 AggregationLevel level, bool short_labels);

}  // namespace sonde::analysis
