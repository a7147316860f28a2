// A software prefetch the compiler keeps.
#pragma once

namespace rotor {

/// Prefetches the cache line at p into every cache level. Not `__builtin_prefetch` in a loop: GCC
/// 12 at -O2 deletes a loop whose body is only that builtin once it can bound the trip count (a
/// loop over a row's lines up to a constant was compiled to nothing), while it keeps an `asm
/// volatile`. A prefetch never faults, but p must point into (or one past) an object.
inline void prefetch_line(const void* p) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p, 1);
#endif
}

}  // namespace rotor
