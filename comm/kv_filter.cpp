#include "comm/kv_filter.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <unordered_map>

#include <fmt/format.h>
#include <zstd.h>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::comm {
namespace {

constexpr std::uint8_t kKeysCached = 1;
constexpr std::uint8_t kHasDropped = 2;
constexpr std::uint8_t kPacked = 4;
constexpr std::uint8_t kNoKeys = 8;    ///< no keys and no key vector on the wire
constexpr std::uint8_t kFloat32 = 16;  ///< the values are written as float32

/// Bytes of a vector on the wire: its u64 count and the elements.
std::uint64_t vector_bytes(std::size_t n, std::size_t element) noexcept {
    return 8 + static_cast<std::uint64_t>(n) * element;
}

/// The bytes of the unencoded wire form of `e` (what write_kv_wire would write before encoding).
std::uint64_t plain_bytes(const KvFilterContext& ctx, const KvEntries& e) {
    const std::size_t kept = e.kept();
    const bool dropped = kept != e.size();
    const std::size_t keys = ctx.channel == KvChannel::kPullReply ? 0 : e.size();
    return 1 + (keys == 0 ? 0 : vector_bytes(keys, 8)) + (dropped ? vector_bytes(e.size(), 1) : 0) +
           vector_bytes(kept * e.width, ctx.float32 ? 4 : 8);
}

/// One slot per (channel, peer), grown on demand.
template <class T>
T& slot(std::vector<std::unique_ptr<T>>& v, bool sender, const KvFilterContext& ctx) {
    const std::size_t i =
        (static_cast<std::size_t>(ctx.peer) * 3 + static_cast<std::size_t>(ctx.channel)) * 2 +
        (sender ? 1 : 0);
    if (v.size() <= i) v.resize(i + 1);
    if (!v[i]) v[i] = std::make_unique<T>();
    return *v[i];
}

/// The values of `wire` as written: doubles, or floats (KvWire::float32).
void put_values(WireWriter& w, const KvWire& wire) {
    if (wire.float32) {
        w.put(std::vector<float>(wire.values.begin(), wire.values.end()));
    } else {
        w.put(wire.values);
    }
}

void get_values(WireReader& r, KvWire& wire) {
    if (wire.float32) {
        const auto narrow = r.get<std::vector<float>>();
        wire.values.assign(narrow.begin(), narrow.end());
    } else {
        r.get(wire.values);
    }
}

double largest_change(std::span<const double> now, std::span<const double> old) {
    double d = 0;
    for (std::size_t j = 0; j < now.size(); ++j) d = std::max(d, std::fabs(now[j] - old[j]));
    return d;
}

}  // namespace

std::size_t KvEntries::kept() const noexcept {
    if (dropped_by.empty()) return keys.size();
    return static_cast<std::size_t>(std::count(dropped_by.begin(), dropped_by.end(), 0));
}

std::uint64_t KvWire::bytes() const noexcept {
    std::uint64_t n = 1;
    if (keys_cached) {
        n += 16;
    } else if (!keys.empty()) {
        n += vector_bytes(keys.size(), 8);
    }
    if (packed) return n + 8 + vector_bytes(payload.size(), 1);
    if (has_dropped) n += vector_bytes(dropped_by.size(), 1);
    return n + vector_bytes(values.size(), float32 ? 4 : 8);
}

void KvFilter::select(const KvFilterContext&, KvEntries&, std::uint8_t) {}
void KvFilter::sent(const KvFilterContext&, const KvEntries&) {}
void KvFilter::restore(const KvFilterContext&, KvEntries&, std::uint8_t) {}
void KvFilter::encode(const KvFilterContext&, KvWire&) {}
void KvFilter::decode(const KvFilterContext&, KvWire&) {}

// Significantly modified ----------------------------------------------------------------------

struct KvSigmodFilter::Memory {
    std::unordered_map<std::uint64_t, std::vector<double>> last;
};

KvSigmodFilter::KvSigmodFilter(double c, Distance push_distance, Distance pull_distance)
    : c_(c), push_distance_(std::move(push_distance)), pull_distance_(std::move(pull_distance)) {
    if (!(c >= 0) || !std::isfinite(c)) throw ConfigError("sigmod threshold", "must be >= 0");
}

KvSigmodFilter::~KvSigmodFilter() = default;

KvSigmodFilter::Memory& KvSigmodFilter::memory(bool sender, const KvFilterContext& ctx) {
    return slot(memories_, sender, ctx);
}

void KvSigmodFilter::select(const KvFilterContext& ctx, KvEntries& e, std::uint8_t self) {
    if (ctx.channel == KvChannel::kPullRequest) return;
    const Distance& distance = ctx.channel == KvChannel::kPush ? push_distance_ : pull_distance_;
    const double threshold = c_ / static_cast<double>(ctx.t + 1);
    const Memory& m = memory(true, ctx);
    const std::vector<double> zeros(e.width, 0.0);
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (e.dropped_by[i] != 0) continue;
        const auto it = m.last.find(e.keys[i]);
        const std::span<const double> old = it == m.last.end() ? zeros : it->second;
        const double change =
            distance ? distance(e.values_of(i), old) : largest_change(e.values_of(i), old);
        if (change <= threshold) e.dropped_by[i] = self;
    }
}

void KvSigmodFilter::sent(const KvFilterContext& ctx, const KvEntries& e) {
    if (ctx.channel == KvChannel::kPullRequest) return;
    Memory& m = memory(true, ctx);
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (e.dropped_by[i] != 0) continue;
        const auto v = e.values_of(i);
        m.last[e.keys[i]].assign(v.begin(), v.end());
    }
}

void KvSigmodFilter::restore(const KvFilterContext& ctx, KvEntries& e, std::uint8_t self) {
    if (ctx.channel == KvChannel::kPullRequest) return;
    Memory& m = memory(false, ctx);
    for (std::size_t i = 0; i < e.size(); ++i) {
        double* out = e.values.data() + i * e.width;
        if (e.dropped_by[i] == self) {
            const auto it = m.last.find(e.keys[i]);
            if (it == m.last.end()) {
                std::fill(out, out + e.width, 0.0);
            } else {
                std::copy(it->second.begin(), it->second.end(), out);
            }
            e.dropped_by[i] = 0;
        } else if (e.dropped_by[i] == 0) {
            m.last[e.keys[i]].assign(out, out + e.width);
        }
    }
}

// Random skip ---------------------------------------------------------------------------------

KvSkipFilter::KvSkipFilter(double rate, std::uint64_t seed) : seed_(seed) {
    if (!(rate >= 0 && rate < 1)) throw ConfigError("skip rate", "must be in [0, 1)");
    cut_ = static_cast<std::uint64_t>(std::ldexp(rate, 64));
}

bool KvSkipFilter::skips(std::uint64_t t, std::uint64_t key) const noexcept {
    std::uint64_t x = seed_;
    std::uint64_t h = splitmix64(x);
    x = h ^ t;
    h = splitmix64(x);
    x = h ^ key;
    return splitmix64(x) < cut_;
}

void KvSkipFilter::select(const KvFilterContext& ctx, KvEntries& e, std::uint8_t self) {
    if (ctx.channel != KvChannel::kPush) return;
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (e.dropped_by[i] == 0 && skips(ctx.t, e.keys[i])) e.dropped_by[i] = self;
    }
}

// A model's rule ------------------------------------------------------------------------------

KvPredicateFilter::KvPredicateFilter(std::string name, Drop drop)
    : name_(std::move(name)), drop_(std::move(drop)) {
    ROTOR_ASSERT(static_cast<bool>(drop_), "a predicate filter needs its rule");
}

void KvPredicateFilter::select(const KvFilterContext& ctx, KvEntries& e, std::uint8_t self) {
    if (ctx.channel != KvChannel::kPush) return;
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (e.dropped_by[i] == 0 && drop_(ctx.t, e.keys[i], e.values_of(i))) {
            e.dropped_by[i] = self;
        }
    }
}

// Key caching ---------------------------------------------------------------------------------

struct KvKeyCacheFilter::Cache {
    std::list<std::uint64_t> order;  ///< signatures, most recently used first
    struct Entry {
        std::vector<std::uint64_t> keys;
        std::list<std::uint64_t>::iterator at;
    };
    std::unordered_map<std::uint64_t, Entry> lists;

    void touch(Entry& e) { order.splice(order.begin(), order, e.at); }
    /// Stores `keys` under `sig` (replacing a list with that signature), evicting the least
    /// recently used list beyond `capacity`.
    void store(std::uint64_t sig, std::vector<std::uint64_t> keys, std::size_t capacity) {
        const auto it = lists.find(sig);
        if (it != lists.end()) {
            it->second.keys = std::move(keys);
            touch(it->second);
            return;
        }
        order.push_front(sig);
        lists.emplace(sig, Entry{std::move(keys), order.begin()});
        if (lists.size() > capacity) {
            lists.erase(order.back());
            order.pop_back();
        }
    }
};

KvKeyCacheFilter::KvKeyCacheFilter(std::size_t capacity, Signature signature)
    : capacity_(capacity), signature_(std::move(signature)) {
    if (capacity_ == 0) throw ConfigError("key cache", "capacity must be >= 1");
    if (!signature_) signature_ = key_list_signature;
}

KvKeyCacheFilter::~KvKeyCacheFilter() = default;

KvKeyCacheFilter::Cache& KvKeyCacheFilter::cache(bool sender, const KvFilterContext& ctx) {
    return slot(caches_, sender, ctx);
}

void KvKeyCacheFilter::encode(const KvFilterContext& ctx, KvWire& wire) {
    if (wire.keys_cached || wire.keys.empty()) return;
    Cache& c = cache(true, ctx);
    const std::uint64_t sig = signature_(wire.keys);
    const auto it = c.lists.find(sig);
    if (it != c.lists.end() && it->second.keys == wire.keys) {
        c.touch(it->second);
        wire.keys_cached = true;
        wire.key_signature = sig;
        wire.key_count = wire.keys.size();
        wire.keys.clear();
        ++hits_;
        return;
    }
    ++misses_;  // never sent, evicted, or another list under this signature: send the keys
    c.store(sig, wire.keys, capacity_);
}

void KvKeyCacheFilter::decode(const KvFilterContext& ctx, KvWire& wire) {
    Cache& c = cache(false, ctx);
    if (!wire.keys_cached) {
        if (!wire.keys.empty()) c.store(signature_(wire.keys), wire.keys, capacity_);
        return;
    }
    const auto it = c.lists.find(wire.key_signature);
    if (it == c.lists.end() || it->second.keys.size() != wire.key_count) {
        throw CommError(ctx.self, fmt::format("kv key cache: rank {} sent the signature {:016x} of "
                                              "{} keys that this rank does not hold",
                                              ctx.peer, wire.key_signature, wire.key_count));
    }
    c.touch(it->second);
    wire.keys = it->second.keys;
    wire.keys_cached = false;
    wire.key_signature = 0;
    wire.key_count = 0;
}

std::uint64_t key_list_signature(std::span<const std::uint64_t> keys) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const auto mix = [&](std::uint64_t v) {
        for (int b = 0; b < 8; ++b) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 0x100000001b3ULL;
        }
    };
    for (const std::uint64_t k : keys) mix(k);
    mix(keys.size());
    return splitmix64(h);
}

// zstd ----------------------------------------------------------------------------------------

KvZstdFilter::KvZstdFilter(int level) : level_(level) {
    if (level < 1 || level > ZSTD_maxCLevel()) {
        throw ConfigError("zstd level", fmt::format("must be in 1..{}", ZSTD_maxCLevel()));
    }
}

void KvZstdFilter::encode(const KvFilterContext& ctx, KvWire& wire) {
    if (wire.packed) return;
    WireWriter raw;
    if (wire.has_dropped) raw.put(wire.dropped_by);
    put_values(raw, wire);
    const std::span<const std::byte> in = raw.bytes();
    std::vector<std::uint8_t> out(ZSTD_compressBound(in.size()));
    const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), level_);
    if (ZSTD_isError(n) != 0) {
        throw CommError(ctx.self, fmt::format("kv zstd: {}", ZSTD_getErrorName(n)));
    }
    out.resize(n);
    if (8 + vector_bytes(out.size(), 1) >= in.size()) return;  // incompressible: send it plain
    wire.packed = true;
    wire.payload = std::move(out);
    wire.payload_raw = in.size();
    wire.dropped_by.clear();
    wire.values.clear();
}

void KvZstdFilter::decode(const KvFilterContext& ctx, KvWire& wire) {
    if (!wire.packed) return;
    const auto bad = [&](const std::string& what) {
        return CommError(ctx.self, fmt::format("kv zstd message from rank {}: {}", ctx.peer, what));
    };
    const unsigned long long stated =
        ZSTD_getFrameContentSize(wire.payload.data(), wire.payload.size());
    if (stated != wire.payload_raw) throw bad("the frame's size differs from the stated size");
    std::vector<std::byte> raw(wire.payload_raw);
    const std::size_t n =
        ZSTD_decompress(raw.data(), raw.size(), wire.payload.data(), wire.payload.size());
    if (ZSTD_isError(n) != 0) throw bad(ZSTD_getErrorName(n));
    if (n != raw.size()) throw bad("short payload");
    WireReader r(raw, fmt::format("kv zstd payload from rank {}", ctx.peer), ctx.self);
    if (wire.has_dropped) r.get(wire.dropped_by);
    get_values(r, wire);
    r.finish();
    wire.packed = false;
    wire.payload.clear();
    wire.payload_raw = 0;
}

// The stack -----------------------------------------------------------------------------------

KvFilterStack::KvFilterStack(std::vector<std::unique_ptr<KvFilter>> filters)
    : filters_(std::move(filters)) {
    if (filters_.size() > 250) throw ConfigError("filters", "at most 250");
    for (const auto& f : filters_) {
        ROTOR_ASSERT(f != nullptr, "no null filters");
        stats_.push_back({.name = f->name()});
    }
}

void KvFilterStack::clear_stats() {
    for (KvFilterStats& s : stats_) s = {.name = s.name};
}

KvWire KvFilterStack::send(const KvFilterContext& ctx, KvEntries& e) {
    ROTOR_ASSERT(e.values.size() == e.size() * e.width, "width values per key");
    if (e.dropped_by.empty()) e.dropped_by.assign(e.size(), 0);
    const bool push = ctx.channel != KvChannel::kPullReply;
    const auto count = [&](KvFilterStats& s, std::uint64_t in, std::uint64_t out) {
        (push ? s.push_in : s.pull_in) += in;
        (push ? s.push_out : s.pull_out) += out;
    };
    for (std::size_t f = 0; f < filters_.size(); ++f) {
        const std::uint64_t in = plain_bytes(ctx, e);
        const auto self = static_cast<std::uint8_t>(f + 1);
        if (!ctx.lossless) filters_[f]->select(ctx, e, self);
        if (!filters_[f]->encodes()) count(stats_[f], in, plain_bytes(ctx, e));
        stats_[f].entries_dropped +=
            static_cast<std::uint64_t>(std::count(e.dropped_by.begin(), e.dropped_by.end(), self));
    }
    for (const auto& f : filters_) f->sent(ctx, e);
    KvWire wire;
    if (push) wire.keys = e.keys;
    wire.float32 = ctx.float32;
    wire.has_dropped = e.kept() != e.size();
    if (wire.has_dropped) wire.dropped_by = e.dropped_by;
    wire.values.reserve(e.kept() * e.width);
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (e.dropped_by[i] != 0) continue;
        const auto v = e.values_of(i);
        wire.values.insert(wire.values.end(), v.begin(), v.end());
    }
    for (std::size_t f = 0; f < filters_.size(); ++f) {
        const std::uint64_t in = wire.bytes();
        filters_[f]->encode(ctx, wire);
        if (filters_[f]->encodes()) count(stats_[f], in, wire.bytes());
    }
    return wire;
}

KvEntries KvFilterStack::receive(const KvFilterContext& ctx, KvWire wire,
                                 std::span<const std::uint64_t> keys, std::size_t width) {
    const auto bad = [&](const std::string& what) {
        return CommError(ctx.self,
                         fmt::format("kv filtered message from rank {}: {}", ctx.peer, what));
    };
    for (auto f = filters_.rbegin(); f != filters_.rend(); ++f) (*f)->decode(ctx, wire);
    if (wire.keys_cached || wire.packed) throw bad("encoded by a filter this rank does not have");
    if (wire.float32 != ctx.float32) throw bad("values of another width than this rank's");
    KvEntries e;
    e.width = width;
    if (ctx.channel == KvChannel::kPullReply) {
        if (!wire.keys.empty()) throw bad("keys in a pull answer");
        e.keys.assign(keys.begin(), keys.end());
    } else {
        e.keys = std::move(wire.keys);
    }
    const std::size_t n = e.size();
    if (wire.has_dropped) {
        if (wire.dropped_by.size() != n) throw bad("drop codes do not match the keys");
        for (const std::uint8_t d : wire.dropped_by) {
            if (d > filters_.size()) throw bad(fmt::format("drop code {} of no filter", d));
        }
        e.dropped_by = std::move(wire.dropped_by);
    } else {
        e.dropped_by.assign(n, 0);
    }
    if (wire.values.size() != e.kept() * width) throw bad("wrong number of values");
    e.values.assign(n * width, 0.0);
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (e.dropped_by[i] != 0) continue;
        std::copy_n(wire.values.begin() + static_cast<std::ptrdiff_t>(at * width), width,
                    e.values.begin() + static_cast<std::ptrdiff_t>(i * width));
        ++at;
    }
    for (std::size_t f = filters_.size(); f-- > 0;) {
        filters_[f]->restore(ctx, e, static_cast<std::uint8_t>(f + 1));
    }
    if (ctx.channel == KvChannel::kPullReply && e.kept() != n) {
        throw bad("a pull answer lost entries that no filter restores");
    }
    return e;
}

void write_kv_wire(WireWriter& w, const KvWire& wire) {
    std::uint8_t flags = 0;
    if (wire.keys_cached) flags |= kKeysCached;
    if (wire.has_dropped) flags |= kHasDropped;
    if (wire.packed) flags |= kPacked;
    if (!wire.keys_cached && wire.keys.empty()) flags |= kNoKeys;
    if (wire.float32) flags |= kFloat32;
    w.put(flags);
    if (wire.keys_cached) {
        w.put(wire.key_signature);
        w.put(wire.key_count);
    } else if (!wire.keys.empty()) {
        w.put(wire.keys);
    }
    if (wire.packed) {
        w.put(wire.payload_raw);
        w.put(wire.payload);
        return;
    }
    if (wire.has_dropped) w.put(wire.dropped_by);
    put_values(w, wire);
}

KvWire read_kv_wire(WireReader& r) {
    KvWire wire;
    const auto flags = r.get<std::uint8_t>();
    if ((flags & ~(kKeysCached | kHasDropped | kPacked | kNoKeys | kFloat32)) != 0) {
        r.fail("unknown filter flags");
    }
    if ((flags & kKeysCached) != 0 && (flags & kNoKeys) != 0) r.fail("cached keys and no keys");
    wire.keys_cached = (flags & kKeysCached) != 0;
    wire.has_dropped = (flags & kHasDropped) != 0;
    wire.packed = (flags & kPacked) != 0;
    wire.float32 = (flags & kFloat32) != 0;
    if (wire.keys_cached) {
        wire.key_signature = r.get<std::uint64_t>();
        wire.key_count = r.get<std::uint64_t>();
    } else if ((flags & kNoKeys) == 0) {
        r.get(wire.keys);
        if (wire.keys.empty()) r.fail("an empty key vector without the no-keys flag");
    }
    if (wire.packed) {
        wire.payload_raw = r.get<std::uint64_t>();
        if (wire.payload_raw > (std::uint64_t{1} << 36)) r.fail("payload too large");
        r.get(wire.payload);
        return wire;
    }
    if (wire.has_dropped) r.get(wire.dropped_by);
    get_values(r, wire);
    return wire;
}

}  // namespace rotor::comm
