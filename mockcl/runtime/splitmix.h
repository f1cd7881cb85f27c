// SplitMix64: the small, seedable generator behind mockcl's seeded choices (probability fault
// rules, out-of-order scheduling), so that the same seed replays the same run.
#ifndef MOCKCL_RUNTIME_SPLITMIX_H_
#define MOCKCL_RUNTIME_SPLITMIX_H_

#include <cstdint>

namespace mockcl {

inline uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_SPLITMIX_H_
