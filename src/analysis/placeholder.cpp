// Removed once the analysis layer has real sources.
namespace sonde::analysis {}
