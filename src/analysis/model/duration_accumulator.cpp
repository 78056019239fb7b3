#include "analysis/model/duration_accumulator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "analysis/model/trace_model.hpp"
#include "format/varint.hpp"
#include "stats/percentile.hpp"

namespace sonde::analysis {
namespace {

constexpr int kSubBits = 7;                       // 128 sub-buckets per power of two
constexpr uint64_t kSubCount = 1u << kSubBits;    // 128
constexpr uint64_t kLinearLimit = 2 * kSubCount;  // values below 256 get their own bucket

size_t bucket_of(int64_t value) {
  if (value < static_cast<int64_t>(kLinearLimit)) return value < 0 ? 0 : static_cast<size_t>(value);
  const auto v = static_cast<uint64_t>(value);
  const int shift = std::bit_width(v) - 1 - kSubBits;  // >= 1
  return kLinearLimit + static_cast<size_t>(shift - 1) * kSubCount + ((v >> shift) - kSubCount);
}

// Midpoint of a bucket's value range.
double bucket_midpoint(size_t index) {
  if (index < kLinearLimit) return static_cast<double>(index);
  const size_t k = index - kLinearLimit;
  const int shift = static_cast<int>(k / kSubCount) + 1;
  const uint64_t low = (kSubCount + k % kSubCount) << shift;
  const uint64_t width = uint64_t{1} << shift;
  return static_cast<double>(low) + static_cast<double>(width - 1) / 2.0;
}

}  // namespace

size_t DurationAccumulator::histogram_bucket(int64_t value) { return bucket_of(value); }

int64_t DurationAccumulator::histogram_bucket_low(size_t index) {
  if (index < kLinearLimit) return static_cast<int64_t>(index);
  const size_t k = index - kLinearLimit;
  const size_t shift = k / kSubCount + 1;
  if (shift >= 56) return std::numeric_limits<int64_t>::max();  // past any int64 duration
  return static_cast<int64_t>((kSubCount + k % kSubCount) << shift);
}

DurationAccumulator DurationAccumulator::from_histogram(
    const std::vector<std::pair<size_t, uint64_t>>& buckets, int64_t total, int64_t min,
    int64_t max) {
  DurationAccumulator a(0);
  a.histogram_mode_ = true;
  for (const auto& [index, times] : buckets) {
    if (times == 0) continue;
    if (a.buckets_.size() <= index) a.buckets_.resize(index + 1, 0);
    a.buckets_[index] += times;
    a.count_ += times;
  }
  if (a.count_ == 0) return DurationAccumulator();
  a.total_ = total;
  a.min_ = a.shift_ = min;
  a.max_ = max;
  // Deviations unknown: the shifted sums of a zero spread.
  a.shifted_sum_ = 0;
  a.shifted_squares_ = 0;
  return a;
}

void DurationAccumulator::add(int64_t value) {
  if (count_ == 0) {
    min_ = max_ = shift_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  total_ = saturating_add(total_, value);  // corrupt timestamps: absurd durations
  const double d = static_cast<double>(value) - static_cast<double>(shift_);
  shifted_sum_ += d;
  shifted_squares_ += d * d;

  if (histogram_mode_) {
    add_to_histogram(value, 1);
    return;
  }
  samples_.push_back(value);
  sorted_ = false;
  if (samples_.size() > exact_limit_) move_to_histogram();
}

void DurationAccumulator::merge(const DurationAccumulator& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    const size_t limit = exact_limit_;
    *this = other;
    exact_limit_ = limit;
    if (!histogram_mode_ && samples_.size() > exact_limit_) move_to_histogram();
    return;
  }
  // Re-express the other's sums relative to this shift: with k the
  // difference of shifts, sum(d + k) and sum((d + k)^2) expand directly.
  const double k = static_cast<double>(other.shift_) - static_cast<double>(shift_);
  const double n_b = static_cast<double>(other.count_);
  shifted_squares_ += other.shifted_squares_ + 2 * k * other.shifted_sum_ + n_b * k * k;
  shifted_sum_ += other.shifted_sum_ + n_b * k;
  count_ += other.count_;
  total_ = saturating_add(total_, other.total_);
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);

  if (!histogram_mode_ && !other.histogram_mode_ &&
      samples_.size() + other.samples_.size() <= exact_limit_) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
    sorted_ = false;
    return;
  }
  if (!histogram_mode_) move_to_histogram();
  if (other.histogram_mode_) {
    if (buckets_.size() < other.buckets_.size()) buckets_.resize(other.buckets_.size());
    for (size_t i = 0; i < other.buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  } else {
    for (int64_t v : other.samples_) add_to_histogram(v, 1);
  }
}

void DurationAccumulator::move_to_histogram() {
  histogram_mode_ = true;
  for (int64_t v : samples_) add_to_histogram(v, 1);
  samples_.clear();
  samples_.shrink_to_fit();
  sorted_ = true;
}

void DurationAccumulator::add_to_histogram(int64_t value, uint64_t times) {
  const size_t index = bucket_of(value);
  if (index >= buckets_.size()) buckets_.resize(index + 1, 0);
  buckets_[index] += times;
}

double DurationAccumulator::histogram_value_at(uint64_t rank) const {
  if (rank == 0) return static_cast<double>(min_);
  if (rank + 1 >= count_) return static_cast<double>(max_);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen > rank) {
      const double mid = bucket_midpoint(i);
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

double DurationAccumulator::quantile(double p) const {
  if (count_ == 0) return 0;
  if (!histogram_mode_) {
    if (!sorted_) {
      std::sort(samples_.begin(), samples_.end());
      sorted_ = true;
    }
    return stats::percentile_sorted(std::span<const int64_t>(samples_), p);
  }
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(count_ - 1) * p;
  const auto low = static_cast<uint64_t>(std::floor(h));
  const double a = histogram_value_at(low);
  const double frac = h - static_cast<double>(low);
  if (frac == 0) return a;
  const double b = histogram_value_at(low + 1);
  return a + frac * (b - a);
}

DistributionSummary DurationAccumulator::summary() const {
  DistributionSummary s;
  if (count_ == 0) return s;
  s.count = count_;
  s.total = total_;
  s.mean = static_cast<double>(total_) / static_cast<double>(count_);
  if (count_ > 1) {
    const double n = static_cast<double>(count_);
    const double squares = shifted_squares_ - shifted_sum_ * shifted_sum_ / n;
    s.stddev = std::sqrt(std::max(0.0, squares) / (n - 1));
  }
  s.min = min_;
  s.max = max_;
  s.exact_quantiles = !histogram_mode_;
  s.median = quantile(0.5);
  s.p90 = quantile(0.90);
  s.p95 = quantile(0.95);
  s.p99 = quantile(0.99);
  return s;
}

namespace {
constexpr uint64_t kStateVersion = 1;

uint64_t double_bits(double d) {
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}
double bits_double(uint64_t bits) {
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
}  // namespace

void DurationAccumulator::save(std::string& out) const {
  using format::put_varint;
  using format::zigzag;
  put_varint(out, kStateVersion);
  put_varint(out, exact_limit_);
  put_varint(out, count_);
  put_varint(out, zigzag(total_));
  put_varint(out, zigzag(min_));
  put_varint(out, zigzag(max_));
  put_varint(out, zigzag(shift_));
  put_varint(out, double_bits(shifted_sum_));
  put_varint(out, double_bits(shifted_squares_));
  put_varint(out, histogram_mode_ ? 1 : 0);
  if (!histogram_mode_) {
    // Sorted, as deltas: small numbers for nearby durations.
    std::vector<int64_t> sorted = samples_;
    std::sort(sorted.begin(), sorted.end());
    put_varint(out, sorted.size());
    int64_t previous = 0;
    for (const int64_t v : sorted) {
      put_varint(out, zigzag(format::wrapping_sub(v, previous)));
      previous = v;
    }
    return;
  }
  // Only the buckets in use: (index after the previous one used, count).
  size_t used = 0;
  for (const uint64_t n : buckets_) used += n > 0 ? 1 : 0;
  put_varint(out, used);
  size_t previous = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] == 0) continue;
    put_varint(out, i - previous);
    put_varint(out, buckets_[i]);
    previous = i;
  }
}

bool DurationAccumulator::load(std::string_view in) {
  const auto* begin = reinterpret_cast<const uint8_t*>(in.data());
  format::ByteCursor c{begin, begin + in.size()};
  if (c.varint() != kStateVersion || !c.ok) return false;
  DurationAccumulator a(static_cast<size_t>(c.varint()));
  a.count_ = c.varint();
  a.total_ = c.svarint();
  a.min_ = c.svarint();
  a.max_ = c.svarint();
  a.shift_ = c.svarint();
  a.shifted_sum_ = bits_double(c.varint());
  a.shifted_squares_ = bits_double(c.varint());
  const uint64_t mode = c.varint();
  if (!c.ok || mode > 1 || a.min_ > a.max_ || a.exact_limit_ == 0) return false;
  a.histogram_mode_ = mode == 1;
  const uint64_t n = c.varint();
  if (!a.histogram_mode_) {
    // At least a byte a sample: a count past the bytes left is a lie.
    if (!c.ok || n != a.count_ || n > a.exact_limit_ || n > static_cast<uint64_t>(c.end - c.p)) {
      return false;
    }
    a.samples_.reserve(static_cast<size_t>(n));
    int64_t previous = 0;
    for (uint64_t i = 0; i < n && c.ok; ++i) {
      const int64_t v = format::wrapping_add(previous, c.svarint());
      if (v < a.min_ || v > a.max_ || (i > 0 && v < previous)) return false;
      a.samples_.push_back(v);
      previous = v;
    }
    a.sorted_ = true;
  } else {
    // Every bucket a value can have: that of the largest int64.
    const size_t limit = bucket_of(std::numeric_limits<int64_t>::max()) + 1;
    if (!c.ok || n > limit) return false;
    size_t index = 0;
    uint64_t total = 0;
    for (uint64_t i = 0; i < n && c.ok; ++i) {
      const uint64_t step = c.varint();
      const uint64_t times = c.varint();
      if (step >= limit - index || (i > 0 && step == 0) || times == 0 || times > a.count_ - total) {
        return false;
      }
      index += static_cast<size_t>(step);
      if (a.buckets_.size() <= index) a.buckets_.resize(index + 1, 0);
      a.buckets_[index] += times;
      total += times;
    }
    if (total != a.count_) return false;
  }
  if (!c.ok || !c.at_end()) return false;
  *this = std::move(a);
  return true;
}

}  // namespace sonde::analysis
