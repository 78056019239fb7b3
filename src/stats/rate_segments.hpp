// Where does the rate of a 0/1 sequence change? Segmentation by repeated
// splitting: a segment is cut where its rate changes, or around a stretch
// whose rate differs from the rest of it, if the cut is significant, and
// each part is examined the same way.
//
// Two kinds of cut, each tested at alpha / 2 with Bonferroni over its
// candidates, so that a segment whose rate is constant is cut with a
// chance of at most alpha, without assuming anything about the maximally
// selected statistic (each part of a cut segment is tested again at the
// same level):
//  (1) one change (binary segmentation): the cut with the largest
//      log-likelihood ratio of two Bernoulli rates against one, among the
//      m - 1 cuts of a segment of m items;
//  (2) a stretch against the rest (circular binary segmentation, Olshen
//      et al. 2004): the interval with the largest ratio among those
//      between points of a grid of at most 128 cells, its ends then moved
//      within the neighbouring cells, one end at a time. Evenly spaced
//      bursts defeat (1): no single cut separates three pauses from the
//      time between them.
// The chosen cut's p-value is exact: given the segment's hits, the hits in
// the cut-off part are hypergeometric under "one rate" (Fisher's exact
// test of the 2 x 2 table, two-sided by doubling the tail on the observed
// side of the mean, at most 1). The chi-squared approximation of the
// likelihood ratio is no substitute for short parts: it puts a run of 4
// hits that opens 1000 items at rate 0.1 at p 1.9e-5, where such a run
// occurs somewhere in about 9% of sequences.
//
// The tests take the items as independent. Requests are not quite (a
// pause slows every request in flight; the Ramp's tests use batch means
// for that reason), so a cut can also mark a burst that independence
// would not explain: for the time in violation that is the point.
//
// Why: the heuristics ask "what share of the time was the requirement
// violated". Fixed time buckets answer it with the bucket width as a
// parameter, and a service whose level sits at its threshold flips with
// that width; segments of constant rate take their extent from the data.
#pragma once

#include <cstddef>
#include <vector>

namespace sonde::stats {

struct RateSegment {
  std::size_t begin = 0;  // first item
  std::size_t end = 0;    // one past the last item
  std::size_t hits = 0;   // items that are true
};

// The segments, in order, covering [0, hits.size()); none for an empty
// sequence. alpha in (0, 1).
std::vector<RateSegment> rate_segments(const std::vector<bool>& hits, double alpha);

// Fisher's exact test, two-sided by doubling the tail on the observed side
// of the mean (at most 1):
// of `total` items with `hits` hits, `drawn` are drawn and `drawn_hits` of
// them are hits; the p-value of a cut-off part of that extent under one
// rate.
double fisher_exact_two_sided(std::size_t total, std::size_t hits, std::size_t drawn,
                              std::size_t drawn_hits);

}  // namespace sonde::stats
