#include "analysis/kieker/sequence_diagram_pic.hpp"

#include <algorithm>
#include <vector>

#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {
namespace {

// Written for sonde with the macro names and arguments of UMLGraph's
// sequence.pic, which Kieker's diagram bodies call. pic has no local
// variables: the helpers pass results in edge_left/edge_right/from_x/to_x.
constexpr std::string_view kMacros =
    R"PIC(# Sequence diagram macros, written for sonde. They keep the names and
# arguments of the UMLGraph sequence.pic macros (D. Spinellis) that Kieker's
# .pic sequence diagrams call, so the diagram body below is Kieker's.
#
# Every lifeline X has two variables: act_X, the number of open activation
# bars, and top_X, where the part of its lifeline not drawn yet begins.
spacing = 0.25;
awid = 0.1;
boxht = 0.3;

# object(name, label line 1, label line 2): a participant box.
define object {
	$1: box $2 $3;
	move;
	act_$1 = 0;
	top_$1 = $1.s.y;
}

# actor(name, label): a stick figure.
define actor {
	$1: [
		Head: circle rad 0.06;
		Spine: line from Head.s down 0.12;
		line from Spine.start + (-0.15, -0.02) to Spine.start + (0.15, -0.02);
		line from Spine.end to Spine.end + (-0.08, -0.15);
		line from Spine.end to Spine.end + (0.08, -0.15);
		$2 at Spine.end + (0, -0.25);
	]
	move;
	act_$1 = 0;
	top_$1 = $1.s.y - 0.05;
}

# lifeline_to_here(name): draws the lifeline down to the current y, as open
# bars when active, dashed otherwise.
define lifeline_to_here {
	if act_$1 > 0 then {
		for lvl = 1 to act_$1 do {
			bar_left = $1.x - awid / 2 + (lvl - 1) * awid / 2;
			line from (bar_left, top_$1) to (bar_left, Here.y);
			line from (bar_left + awid, top_$1) to (bar_left + awid, Here.y);
		}
	} else {
		line from ($1.x, top_$1) to ($1.x, Here.y) dashed;
	}
	top_$1 = Here.y;
}

# bar_edges(name, level): left and right x of activation bar `level`.
define bar_edges {
	edge_left = $1.x - awid / 2;
	if $2 > 1 then { edge_left = edge_left + ($2 - 1) * awid / 2; }
	edge_right = edge_left + awid;
}

define step {
	down;
	move spacing;
}

define active {
	lifeline_to_here($1);
	act_$1 = act_$1 + 1;
	bar_edges($1, act_$1);
	line from (edge_left, Here.y) to (edge_right, Here.y);
}

define inactive {
	lifeline_to_here($1);
	bar_edges($1, act_$1);
	line from (edge_left, Here.y) to (edge_right, Here.y);
	act_$1 = act_$1 - 1;
}

define complete {
	lifeline_to_here($1);
	if act_$1 > 0 then {
		for lvl = 1 to act_$1 do {
			bar_edges($1, lvl);
			line from (edge_left, Here.y) to (edge_right, Here.y);
		}
	}
}

# Synchronous calls get filled arrowheads, the rest open ones.
define sync {
	arrowhead = 1;
}

define async {
	arrowhead = 0;
}

# arrow_ends(from, to, to_level): x where an arrow between the innermost bar
# of `from` and bar `to_level` of `to` starts and ends.
define arrow_ends {
	bar_edges($1, act_$1);
	if $1.x <= $2.x then { from_x = edge_right; } else { from_x = edge_left; }
	bar_edges($2, $3);
	if $1.x <= $2.x then { to_x = edge_left; } else { to_x = edge_right; }
}

# message(from, to, label): a call, into the bar `to` is about to open.
define message {
	down;
	move spacing;
	arrow_ends($1, $2, act_$2 + 1);
	if $1.x == $2.x then {
		arrow from (from_x, Here.y) right 0.3 then down 0.25 then left 0.3 - awid / 2 $3 ljust;
	} else {
		arrow from (from_x, Here.y) to (to_x, Here.y) $3 above;
	}
}

# rmessage(from, to, label): a return, drawn dashed.
define rmessage {
	down;
	move spacing;
	arrow_ends($1, $2, act_$2);
	arrow from (from_x, Here.y) to (to_x, Here.y) dashed $3 above;
}
)PIC";

}  // namespace

std::string_view sequence_pic_macros() { return kMacros; }

std::string pic_quote(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c >= 0x80) {
      const size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        out += '?';
      } else {
        out.append(text.substr(i, len));
        i += len;
        continue;
      }
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string sequence_diagram_pic(const SequenceDiagram& diagram) {
  const auto name = [&](size_t participant) {
    return "O" + std::to_string(diagram.participants[participant].id);
  };
  std::string out = ".PS\n";
  out += kMacros;
  out += "\nboxwid = 1.1;\nmovewid = 0.5;\n";
  out += "actor(" + name(0) + ",\"\");\n";
  for (size_t p = 1; p < diagram.participants.size(); ++p) {
    const SequenceParticipant& part = diagram.participants[p];
    out +=
        "object(" + name(p) + "," + pic_quote(part.host) + "," + pic_quote(part.component) + ");\n";
  }
  out += "step();\nactive(" + name(0) + ");\n";
  bool first_call = true;
  for (const SequenceMessage& m : diagram.messages) {
    if (m.call) {
      // Kieker draws the entry call asynchronous, all later calls synchronous.
      out += first_call ? "async();\n" : "sync();\n";
      first_call = false;
      out += "message(" + name(m.from) + "," + name(m.to) + ", " + pic_quote(m.label) + ");\n";
      out += "active(" + name(m.to) + ");\nstep();\n";
    } else {
      out += "step();\nasync();\n";
      out += "rmessage(" + name(m.from) + "," + name(m.to) + ", " + pic_quote(m.label) + ");\n";
      out += "inactive(" + name(m.from) + ");\n";
    }
  }
  out += "inactive(" + name(0) + ");\nstep();\n";
  // Kieker completes every lifeline in id order, then the actor's once more.
  std::vector<int32_t> ids;
  for (const SequenceParticipant& p : diagram.participants) ids.push_back(p.id);
  std::sort(ids.begin(), ids.end());
  for (int32_t id : ids) out += "complete(O" + std::to_string(id) + ");\n";
  out += "complete(" + name(0) + ");\n.PE\n";
  return out;
}

}  // namespace sonde::analysis
