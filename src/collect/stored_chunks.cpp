#include "collect/stored_chunks.hpp"

namespace sonde::collect {

void StoredChunks::attach(const std::string& stream) { ++entries_[stream].connections; }

void StoredChunks::detach(const std::string& stream) {
  auto it = entries_.find(stream);
  if (it == entries_.end() || it->second.connections == 0) return;
  if (--it->second.connections > 0) return;
  it->second.detached_at = next_detach_;
  detached_.push_back({stream, next_detach_++});
  // Forget the streams that ended longest ago; one that has a connection
  // again, or ended again since (a later entry in the queue stands for
  // it), stays.
  while (detached_.size() > keep_closed_) {
    const Detached oldest = std::move(detached_.front());
    detached_.pop_front();
    auto old = entries_.find(oldest.stream);
    if (old != entries_.end() && old->second.connections == 0 &&
        old->second.detached_at == oldest.at) {
      entries_.erase(old);
    }
  }
}

}  // namespace sonde::collect
