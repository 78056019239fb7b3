// Removed once the monitor has real sources.
namespace sonde::monitor {}
