#include "comm/kv_filter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <list>
#include <memory>
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
constexpr std::uint8_t kNoKeys = 8;      ///< no keys and no key vector on the wire
constexpr std::uint8_t kFloat32 = 16;    ///< the values are written as float32
constexpr std::uint8_t kZeroBytes = 32;  ///< the values are written without their zero bytes

// Drop codes on the wire: the key count n (varint), a code byte c, a form x (varint), then which
// keys were dropped, in the smallest of three forms:
//   x = 0:          a bitmap of the dropped keys (key i is bit i % 8 of byte i / 8);
//   x = 4k + 1:     the k kept keys' positions, every other key dropped;
//   x = 4k + 3:     the k dropped keys' positions;
// a list of positions as varints, the first position, then each gap to the next minus one. When
// every dropped key has the same code, c is that code; otherwise c is 0 and the dropped keys'
// codes follow, one byte each, in key order. A message of a hundred keys of which one or none is
// kept (a pull answer whose weights did not move) costs 4 or 3 bytes, one mostly kept a few.

/// The code all dropped entries share, or 0 when they differ.
std::uint8_t common_code(std::span<const std::uint8_t> codes) noexcept {
    std::uint8_t c = 0;
    for (const std::uint8_t d : codes) {
        if (d == 0 || d == c) continue;
        if (c != 0) return 0;
        c = d;
    }
    return c;
}

constexpr std::uint64_t kBitmapForm = 0;
constexpr std::uint64_t kKeptForm = 1;
constexpr std::uint64_t kDroppedForm = 3;

/// How `codes` travel: the common code, the form, and the bytes of it all.
struct DropCodesPlan {
    std::uint8_t common = 0;
    std::uint64_t form = kBitmapForm;  ///< kBitmapForm, kKeptForm or kDroppedForm
    std::uint64_t listed = 0;          ///< positions listed (list forms)
    std::uint64_t bytes = 0;
};

DropCodesPlan plan_drop_codes(std::span<const std::uint8_t> codes) noexcept {
    DropCodesPlan p;
    p.common = common_code(codes);
    // The two lists' sizes in one walk: a position's varint is its gap from the last listed.
    std::uint64_t kept = 0, dropped = 0, kept_bytes = 0, dropped_bytes = 0;
    std::uint64_t next_kept = 0, next_dropped = 0;  // the position a gap of 0 would name
    for (std::uint64_t i = 0; i < codes.size(); ++i) {
        if (codes[i] == 0) {
            kept_bytes += varint_bytes(i - next_kept);
            next_kept = i + 1;
            ++kept;
        } else {
            dropped_bytes += varint_bytes(i - next_dropped);
            next_dropped = i + 1;
            ++dropped;
        }
    }
    const std::uint64_t bitmap = 1 + (codes.size() + 7) / 8;
    const std::uint64_t kept_list = varint_bytes(4 * kept + kKeptForm) + kept_bytes;
    const std::uint64_t dropped_list = varint_bytes(4 * dropped + kDroppedForm) + dropped_bytes;
    std::uint64_t form_bytes = bitmap;
    if (kept_list < form_bytes) {
        p.form = kKeptForm;
        p.listed = kept;
        form_bytes = kept_list;
    }
    if (dropped_list < form_bytes) {
        p.form = kDroppedForm;
        p.listed = dropped;
        form_bytes = dropped_list;
    }
    p.bytes = varint_bytes(codes.size()) + 1 + form_bytes + (p.common == 0 ? dropped : 0);
    return p;
}

std::uint64_t drop_codes_bytes(std::span<const std::uint8_t> codes) noexcept {
    return plan_drop_codes(codes).bytes;
}

void put_drop_codes(WireWriter& w, std::span<const std::uint8_t> codes) {
    const DropCodesPlan p = plan_drop_codes(codes);
    w.put_varint(codes.size());
    w.put(p.common);
    if (p.form == kBitmapForm) {
        w.put_varint(kBitmapForm);
        std::vector<std::uint8_t> bits((codes.size() + 7) / 8, 0);
        for (std::size_t i = 0; i < codes.size(); ++i) {
            if (codes[i] != 0)
                bits[i / 8] = static_cast<std::uint8_t>(bits[i / 8] | (1u << (i % 8)));
        }
        w.put_array(std::span<const std::uint8_t>(bits));
    } else {
        w.put_varint(4 * p.listed + p.form);
        const bool kept = p.form == kKeptForm;
        std::uint64_t next = 0;
        for (std::uint64_t i = 0; i < codes.size(); ++i) {
            if ((codes[i] == 0) != kept) continue;
            w.put_varint(i - next);
            next = i + 1;
        }
    }
    if (p.common != 0) return;
    for (const std::uint8_t d : codes)
        if (d != 0) w.put(d);
}

void get_drop_codes(WireReader& r, std::vector<std::uint8_t>& codes) {
    const std::uint64_t n = r.get_varint();
    const auto c = r.get<std::uint8_t>();
    const std::uint64_t x = r.get_varint();
    // Every form takes at least a byte per 8 keys (bitmap) or per listed key: checked before
    // anything of size n is allocated.
    if (x == kBitmapForm) {
        if (n / 8 > r.remaining()) r.fail("drop codes: more keys than bytes left");
        std::vector<std::uint8_t> bits((n + 7) / 8);
        r.get_array(std::span<std::uint8_t>(bits));
        if (n % 8 != 0 && (bits.back() >> (n % 8)) != 0)
            r.fail("drop codes: bits past the last key");
        codes.assign(n, 0);
        for (std::size_t i = 0; i < n; ++i)
            codes[i] = static_cast<std::uint8_t>((bits[i / 8] >> (i % 8)) & 1u);
    } else {
        const std::uint64_t form = x % 4;
        const std::uint64_t listed = x / 4;
        if (form != kKeptForm && form != kDroppedForm) r.fail("drop codes: an unknown form");
        if (listed > n || listed > r.remaining()) r.fail("drop codes: more positions than keys");
        if (n > (std::uint64_t{1} << 36)) r.fail("drop codes: too many keys");
        const std::uint8_t listed_code = form == kKeptForm ? 0 : 1;
        codes.assign(n, static_cast<std::uint8_t>(1 - listed_code));
        std::uint64_t next = 0;
        for (std::uint64_t j = 0; j < listed; ++j) {
            const std::uint64_t gap = r.get_varint();
            if (gap >= n - next) r.fail("drop codes: a position past the last key");
            next += gap;
            codes[next++] = listed_code;
        }
    }
    for (std::uint8_t& d : codes) {
        if (d == 0) continue;
        d = c != 0 ? c : r.get<std::uint8_t>();
        if (d == 0) r.fail("drop codes: a dropped key with code 0");
    }
}

// Values on the wire: a varint count, then each value as a float (KvWire::float32), as a double,
// or, when that is shorter (KvWire::zero_bytes), as a double without its zero bytes: a byte whose
// bit j says byte j (little-endian) of the double is not zero, then those bytes. 0 takes one
// byte, +inf three, a weight of many bits nine.

std::size_t nonzero_bytes(double v) noexcept {
    const auto bits = std::bit_cast<std::uint64_t>(v);
    std::size_t n = 0;
    for (int j = 0; j < 8; ++j) n += ((bits >> (8 * j)) & 0xFF) != 0 ? 1 : 0;
    return n;
}

/// The bytes of doubles written without their zero bytes (the count excluded).
std::uint64_t zero_suppressed_bytes(std::span<const double> values) noexcept {
    std::uint64_t n = 0;
    for (const double v : values) n += 1 + nonzero_bytes(v);
    return n;
}

/// Whether doubles travel without their zero bytes: when that is shorter.
bool suppress_zero_bytes(std::span<const double> values) noexcept {
    return zero_suppressed_bytes(values) < 8 * static_cast<std::uint64_t>(values.size());
}

/// The bytes of `values` on the wire (the count included).
std::uint64_t values_bytes(std::span<const double> values, bool float32) noexcept {
    const std::uint64_t body =
        float32 ? 4 * static_cast<std::uint64_t>(values.size())
                : std::min<std::uint64_t>(8 * values.size(), zero_suppressed_bytes(values));
    return varint_bytes(values.size()) + body;
}

/// The bytes of the unencoded wire form of `e` (what write_kv_wire would write before encoding).
std::uint64_t plain_bytes(const KvFilterContext& ctx, const KvEntries& e) {
    const std::size_t kept = e.kept();
    const bool dropped = kept != e.size();
    const std::size_t keys = ctx.channel == KvChannel::kPullReply ? 0 : e.size();
    std::vector<double> kept_values;
    kept_values.reserve(kept * e.width);
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (dropped && e.dropped_by[i] != 0) continue;
        const auto v = e.values_of(i);
        kept_values.insert(kept_values.end(), v.begin(), v.end());
    }
    return 1 + (keys == 0 ? 0 : counted_bytes(keys, 8)) +
           (dropped ? drop_codes_bytes(e.dropped_by) : 0) + values_bytes(kept_values, ctx.float32);
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

/// The values of `wire` as written: doubles, floats (KvWire::float32) or doubles without their
/// zero bytes (KvWire::zero_bytes).
void put_values(WireWriter& w, const KvWire& wire) {
    if (wire.float32) {
        const std::vector<float> narrow(wire.values.begin(), wire.values.end());
        w.put_counted(std::span<const float>(narrow));
    } else if (wire.zero_bytes) {
        w.put_varint(wire.values.size());
        for (const double v : wire.values) {
            const auto bits = std::bit_cast<std::uint64_t>(v);
            std::uint8_t mask = 0;
            for (int j = 0; j < 8; ++j)
                if (((bits >> (8 * j)) & 0xFF) != 0)
                    mask = static_cast<std::uint8_t>(mask | 1u << j);
            w.put(mask);
            for (int j = 0; j < 8; ++j)
                if ((mask >> j & 1u) != 0) w.put(static_cast<std::uint8_t>(bits >> (8 * j)));
        }
    } else {
        w.put_counted(std::span<const double>(wire.values));
    }
}

void get_values(WireReader& r, KvWire& wire) {
    if (wire.float32) {
        std::vector<float> narrow;
        r.get_counted(narrow);
        wire.values.assign(narrow.begin(), narrow.end());
    } else if (wire.zero_bytes) {
        const std::uint64_t n = r.get_varint();
        if (n > r.remaining()) r.fail("values: more than bytes left");  // a byte each at least
        wire.values.resize(n);
        for (double& v : wire.values) {
            const auto mask = r.get<std::uint8_t>();
            std::uint64_t bits = 0;
            for (int j = 0; j < 8; ++j) {
                if ((mask >> j & 1u) == 0) continue;
                const auto b = r.get<std::uint8_t>();
                if (b == 0) r.fail("values: a zero byte marked as not zero");
                bits |= std::uint64_t{b} << (8 * j);
            }
            v = std::bit_cast<double>(bits);
        }
    } else {
        r.get_counted(wire.values);
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
        n += 8 + varint_bytes(key_count);
    } else if (!keys.empty()) {
        n += counted_bytes(keys.size(), 8);
    }
    if (packed) return n + varint_bytes(payload_raw) + counted_bytes(payload.size(), 1);
    if (has_dropped) n += drop_codes_bytes(dropped_by);
    if (zero_bytes) return n + varint_bytes(values.size()) + zero_suppressed_bytes(values);
    return n + counted_bytes(values.size(), float32 ? 4 : 8);
}

void KvFilter::select(const KvFilterContext&, KvEntries&, std::uint8_t) {}
void KvFilter::select_unchanged(const KvFilterContext&, KvEntries&, std::uint8_t) {}
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

void KvSigmodFilter::select_unchanged(const KvFilterContext& ctx, KvEntries& e, std::uint8_t self) {
    if (ctx.channel == KvChannel::kPullRequest) return;
    const Memory& m = memory(true, ctx);
    const std::vector<double> zeros(e.width, 0.0);
    const auto same_bits = [](std::span<const double> a, std::span<const double> b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](double x, double y) {
            return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
        });
    };
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (e.dropped_by[i] != 0) continue;
        const auto it = m.last.find(e.keys[i]);
        if (same_bits(e.values_of(i), it == m.last.end() ? zeros : it->second)) {
            e.dropped_by[i] = self;
        }
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

struct KvZstdFilter::Stream {
    struct FreeC {
        void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
    };
    struct FreeD {
        void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
    };
    std::unique_ptr<ZSTD_CCtx, FreeC> compress;
    std::unique_ptr<ZSTD_DCtx, FreeD> decompress;
};

KvZstdFilter::KvZstdFilter(int level) : level_(level) {
    if (level < 1 || level > ZSTD_maxCLevel()) {
        throw ConfigError("zstd level", fmt::format("must be in 1..{}", ZSTD_maxCLevel()));
    }
}

KvZstdFilter::~KvZstdFilter() = default;

KvZstdFilter::Stream& KvZstdFilter::stream(bool sender, const KvFilterContext& ctx) {
    return slot(streams_, sender, ctx);
}

void KvZstdFilter::encode(const KvFilterContext& ctx, KvWire& wire) {
    if (wire.packed) return;
    const auto check = [&](std::size_t code) {
        if (ZSTD_isError(code) != 0) {
            throw CommError(ctx.self, fmt::format("kv zstd: {}", ZSTD_getErrorName(code)));
        }
        return code;
    };
    Stream& s = stream(true, ctx);
    if (!s.compress) {
        s.compress.reset(ZSTD_createCCtx());
        if (!s.compress) throw CommError(ctx.self, "kv zstd: out of memory");
        check(ZSTD_CCtx_setParameter(s.compress.get(), ZSTD_c_compressionLevel, level_));
        check(ZSTD_CCtx_setParameter(s.compress.get(), ZSTD_c_windowLog, kWindowLog));
    }
    WireWriter raw;
    if (wire.has_dropped) put_drop_codes(raw, wire.dropped_by);
    put_values(raw, wire);
    const std::span<const std::byte> in = raw.bytes();
    // A payload of a few bytes (a pull answer that changed nothing) travels plain, outside the
    // stream: a flushed block costs a 3-byte header and the stated size, and so few literals
    // hardly shrink. The receiver sees it unpacked and leaves its stream alone too. Every other
    // message goes through the stream (the receiver's history must see what the sender's saw): an
    // incompressible one costs a raw block's 3-byte header.
    if (in.size() < kMinPacked) return;
    std::vector<std::uint8_t> out(ZSTD_compressBound(in.size()) + 32);
    ZSTD_inBuffer src{in.data(), in.size(), 0};
    ZSTD_outBuffer dst{out.data(), out.size(), 0};
    while (check(ZSTD_compressStream2(s.compress.get(), &dst, &src, ZSTD_e_flush)) != 0) {
        out.resize(out.size() * 2);
        dst.dst = out.data();
        dst.size = out.size();
    }
    out.resize(dst.pos);
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
    Stream& s = stream(false, ctx);
    if (!s.decompress) {
        s.decompress.reset(ZSTD_createDCtx());
        if (!s.decompress) throw bad("out of memory");
        const std::size_t code =
            ZSTD_DCtx_setParameter(s.decompress.get(), ZSTD_d_windowLogMax, kWindowLog);
        if (ZSTD_isError(code) != 0) throw bad(ZSTD_getErrorName(code));
    }
    std::vector<std::byte> raw(wire.payload_raw);
    ZSTD_inBuffer src{wire.payload.data(), wire.payload.size(), 0};
    ZSTD_outBuffer dst{raw.data(), raw.size(), 0};
    while (src.pos < src.size) {
        const std::size_t before_in = src.pos;
        const std::size_t before_out = dst.pos;
        const std::size_t code = ZSTD_decompressStream(s.decompress.get(), &dst, &src);
        if (ZSTD_isError(code) != 0) throw bad(ZSTD_getErrorName(code));
        if (src.pos == before_in && dst.pos == before_out) {
            throw bad("the payload is larger than its stated size");
        }
    }
    if (dst.pos != raw.size()) throw bad("the payload is shorter than its stated size");
    WireReader r(raw, fmt::format("kv zstd payload from rank {}", ctx.peer), ctx.self);
    if (wire.has_dropped) get_drop_codes(r, wire.dropped_by);
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
        if (ctx.lossless) {
            filters_[f]->select_unchanged(ctx, e, self);
        } else {
            filters_[f]->select(ctx, e, self);
        }
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
    wire.zero_bytes = !wire.float32 && suppress_zero_bytes(wire.values);
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
    if (wire.zero_bytes) flags |= kZeroBytes;
    w.put(flags);
    if (wire.keys_cached) {
        w.put(wire.key_signature);
        w.put_varint(wire.key_count);
    } else if (!wire.keys.empty()) {
        w.put_counted(std::span<const std::uint64_t>(wire.keys));
    }
    if (wire.packed) {
        w.put_varint(wire.payload_raw);
        w.put_counted(std::span<const std::uint8_t>(wire.payload));
        return;
    }
    if (wire.has_dropped) put_drop_codes(w, wire.dropped_by);
    put_values(w, wire);
}

KvWire read_kv_wire(WireReader& r) {
    KvWire wire;
    const auto flags = r.get<std::uint8_t>();
    if ((flags & ~(kKeysCached | kHasDropped | kPacked | kNoKeys | kFloat32 | kZeroBytes)) != 0) {
        r.fail("unknown filter flags");
    }
    if ((flags & kFloat32) != 0 && (flags & kZeroBytes) != 0) r.fail("float32 and zero bytes");
    if ((flags & kKeysCached) != 0 && (flags & kNoKeys) != 0) r.fail("cached keys and no keys");
    wire.keys_cached = (flags & kKeysCached) != 0;
    wire.has_dropped = (flags & kHasDropped) != 0;
    wire.packed = (flags & kPacked) != 0;
    wire.float32 = (flags & kFloat32) != 0;
    wire.zero_bytes = (flags & kZeroBytes) != 0;
    if (wire.keys_cached) {
        wire.key_signature = r.get<std::uint64_t>();
        wire.key_count = r.get_varint();
    } else if ((flags & kNoKeys) == 0) {
        r.get_counted(wire.keys);
        if (wire.keys.empty()) r.fail("an empty key vector without the no-keys flag");
    }
    if (wire.packed) {
        wire.payload_raw = r.get_varint();
        if (wire.payload_raw > (std::uint64_t{1} << 36)) r.fail("payload too large");
        r.get_counted(wire.payload);
        return wire;
    }
    if (wire.has_dropped) get_drop_codes(r, wire.dropped_by);
    get_values(r, wire);
    return wire;
}

}  // namespace rotor::comm
